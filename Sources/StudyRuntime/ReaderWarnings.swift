@_spi(Bindings) import LuaHost
import SensorKitModel

/// Warnings about readers whose callbacks reach no one (a reader that gets no callbacks
/// says nothing by itself). Three cases, each warned once per script line that made such
/// readers, at deterministic points of the run:
/// - a status change (`didChangeAuthorizationStatus`) for a reader the protocol dropped and
///   the collector reclaimed, whose delegate had that callback: warned when the change
///   is not delivered;
/// - `startRecording`/`stopRecording` failing on a reader without a delegate: the failure
///   comes only as a callback, so it is lost; warned when it is not delivered;
/// - a reader the protocol made and never used (no delegate, no property read, no
///   method called): warned at the end of the study.
/// The runtime's own readers (declarative enrolment) are left alone.
struct ReaderWarnings {
    /// Records of collected readers whose delegates heard status changes, in the order dropped.
    var droppedListeners: [ReaderRecord] = []
    /// Never-used readers the collector reclaimed, per `key`, in the order first seen.
    var unusedDropped: [(record: ReaderRecord, count: Int)] = []
    private var unusedIndex: [String: Int] = [:]
    private var listenerKeys: Set<String> = []
    /// Keys (kind and place) already warned about.
    var warned: Set<String> = []

    /// `"SRSensorReader(x)@protocol.lua:12"`: readers made by one line count as one.
    static func key(_ r: ReaderRecord) -> String { r.title + "@" + (r.madeAt ?? "") }

    /// Notes what matters of the collected reader `r` before its weak entry is dropped.
    mutating func noteCollected(_ r: ReaderRecord) {
        guard r.madeAt != nil else { return }
        let key = Self.key(r)
        if r.hasDelegate && r.delegateHearsStatus && listenerKeys.insert(key).inserted { droppedListeners.append(r) }
        if !r.used {
            if let i = unusedIndex[key] { unusedDropped[i].count += 1 } else {
                unusedIndex[key] = unusedDropped.count
                unusedDropped.append((r, 1))
            }
        }
    }
}

extension ParticipantRun {
    /// Drops the weak entries of collected readers, noting what the warnings need of them.
    func pruneReaders() {
        for w in readers where w.reader == nil { readerWarnings.noteCollected(w.record) }
        readers.removeAll { $0.reader == nil }
    }

    /// Warns, once per place, for each collected reader of a changed sensor whose delegate
    /// would have been told (`didChangeAuthorizationStatus`). Call after `pruneReaders`.
    func warnUnheardStatusChanges(_ changes: [StatusChange]) {
        for change in changes {
            for r in readerWarnings.droppedListeners where r.sensor == change.sensor {
                guard readerWarnings.warned.insert("status " + ReaderWarnings.key(r)).inserted else { continue }
                log("warn", "\(r.described) was not told that \(change.sensor.rawValue) is now \(change.to.name) "
                    + "(didChangeAuthorizationStatus): the protocol kept no reference to the reader, so it was collected "
                    + "with its delegate; keep a reader in a variable for as long as its callbacks matter")
            }
        }
    }

    /// Warns, once per place, that `operation` failed on a reader without a delegate: the
    /// failure comes only as a delegate callback (`callback`), which nobody receives.
    func warnUnheardFailure(_ r: Reader, _ operation: String, _ callback: String, _ error: SensorKitError) {
        guard !r.record.hasDelegate, r.record.madeAt != nil,
              readerWarnings.warned.insert("failure " + ReaderWarnings.key(r.record)).inserted else { return }
        log("warn", "\(operation)() failed on \(r.record.described), which has no delegate to tell (\(callback)): "
            + "\(error.codeName) — \(error.message); set reader.delegate to hear of it")
    }

    /// At the end of the study: warns, once per place, about readers the protocol made,
    /// never used (no delegate, property or method) and kept no reference to. A full
    /// collection first makes "no reference" independent of when the collector last ran;
    /// an unused reader still referenced is left alone (kept for later, as a tombstone
    /// reader a participant without deletions never needs).
    func warnUnusedReaders() {
        state.collectGarbage()
        state.collectGarbage()
        pruneReaders()
        for (r, count) in readerWarnings.unusedDropped where readerWarnings.warned.insert("unused " + ReaderWarnings.key(r)).inserted {
            let what = count == 1 ? r.described + " was" : "\(count) readers like \(r.described) were"
            log("warn", "\(what) dropped unused: no reference kept, no delegate set, no method called, so no callback "
                + "ever reached it; keep the reader in a variable and set its delegate or call its methods, or remove the line")
        }
    }
}
