import Foundation
import SensorKitModel
import StudyStore

/// Writes samples as a MyDataHelps SensorKit export tree (the layout `MDHFormat` reads):
/// `<root>/sensorkit-<sensor>/<iPhone|Watch>/<participant>/<device id>/<yyyy-MM-dd>.json`, one
/// file per UTC day holding `{"device": {…}, "samples": [items]}`, an item per write batch
/// (`{"timestamp": w, "sample": [elements]}`), each element the row's fields under Apple's
/// property names (`acceleration.x` nested as `{"acceleration": {"x": …}}`). Numbers are
/// written as their shortest round-trip text, so that reading them back gives the same
/// doubles. Streams: one hour of samples in memory at a time.
///
/// For array-shaped sensors whose fields are all numbers (accelerometer, rotation rate…): the
/// benchmark's input (`sensorium bench store`) and the round-trip tests of the importer.
package enum MDHWriter {
    /// The sample-type folder of `sensor` (`sensorkit-accelerometer`, `sensorkit-rotation-rate`).
    package static func folder(_ sensor: Sensor) -> String {
        "sensorkit-" + sensor.rawValue.reduce(into: "") { out, c in
            if c.isUppercase { out += "-" + c.lowercased() } else { out.append(c) }
        }
    }

    /// Writes `source`'s `sensor` samples of `device` written in (start, end] under `root`,
    /// the device folder named `deviceID`. Returns the rows written. Throws `ImportError`
    /// when a file cannot be written, or when the sensor is not array-shaped with numeric
    /// fields only.
    @discardableResult
    package static func write(source: any SampleSource, participant: String, device: SRDevice, deviceID: String, sensor: Sensor,
                      start: Double, end: Double, root: String) throws -> Int {
        let keys = try ElementKeys(sensor)
        let dir = [root, folder(sensor), device.kind == .watch ? "Watch" : "iPhone", participant, deviceID].joined(separator: "/")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        var out = FileOutput()
        var rows = 0
        var day = start
        while day < end {
            let dayEnd = min(end, (day / 86_400).rounded(.down) * 86_400 + 86_400)
            let path = dir + "/" + dayName(day) + ".json"
            try out.open(path)
            try out.append("{\"device\": ")
            try out.append(deviceObject(device))
            try out.append(", \"samples\": [")
            var first = true
            var t = day
            while t < dayEnd {
                let hi = min(dayEnd, t + 3_600)
                let b = try source.samples(participant: participant, sensor: sensor, device: device, writtenAfter: t, through: hi)
                try writeItems(b, keys: keys, first: &first, into: &out)
                rows += b.count
                t = hi
            }
            try out.append("\n]}\n")
            try out.close()
            day = dayEnd
        }
        return rows
    }

    /// `yyyy-MM-dd` of the UTC day holding `t`.
    package static func dayName(_ t: Double) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd"
        return f.string(from: Date(timeIntervalSince1970: t))
    }

    package static func deviceObject(_ d: SRDevice) -> String {
        var s = ""
        JSONWriter.write(.object([("systemVersion", .string(d.systemVersion)), ("systemName", .string(d.systemName)),
                                  ("model", .string(d.model)), ("name", .string(d.name)), ("productType", .string(d.productType))]), into: &s)
        return s
    }

    /// How an element object is laid out: per top-level key, its text (`"acceleration": `) and
    /// either a value (the row time: -1, or schema column k) or nested keys with their columns.
    package struct ElementKeys {
        struct Top {
            var text: [UInt8]
            var column: Int?
            var nested: [(text: [UInt8], column: Int)]
        }
        var tops: [Top] = []
        /// Per schema column: written as a whole number.
        var whole: [Bool]

        /// Throws unless `sensor` is array-shaped with a date row time and numeric fields.
        init(_ sensor: Sensor) throws {
            let info = sensor.info
            guard info.shape == .array, let rowTime = info.rowTimeField,
                  info.columnFields.allSatisfy({ [.double, .duration, .absoluteTime, .date, .int].contains($0.type) }) else {
                throw ImportError(file: "", "MyDataHelps writer: \(sensor.rawValue) is not array-shaped with numeric fields")
            }
            whole = info.columnFields.map { $0.type == .int }
            let paths = info.columnFields.map(\.appleName) + [rowTime.appleName]
            for (k, path) in paths.enumerated() {
                let column = k == info.columnFields.count ? -1 : k
                let parts = path.split(separator: ".").map(String.init)
                func quoted(_ s: String) -> [UInt8] { Array("\"\(s)\": ".utf8) }
                if parts.count == 1 {
                    tops.append(Top(text: quoted(parts[0]), column: column, nested: []))
                } else if let i = tops.firstIndex(where: { $0.column == nil && $0.text == quoted(parts[0]) }) {
                    tops[i].nested.append((quoted(parts[1]), column))
                } else {
                    tops.append(Top(text: quoted(parts[0]), column: nil, nested: [(quoted(parts[1]), column)]))
                }
            }
        }
    }

    /// Writes the rows of `b` as items, one per run of rows sharing a write time (a fetch
    /// result); values that are missing (or not finite) are left out of their element.
    package static func writeItems(_ b: SampleBatch, keys: ElementKeys, first: inout Bool, into out: inout FileOutput) throws {
        guard b.count > 0 else { return }
        let doubles: [[Double]?] = b.columns.map { if case .double(let x) = $0.data { x } else { nil } }
        let ints: [[Int64]?] = b.columns.map(\.data.ints)
        let present: [[Bool]?] = b.columns.map(\.present)
        let times = b.times
        /// Writes `value` of column `k` (-1: the row time) of row `r` after `key`; false when missing.
        func value(_ key: [UInt8], _ k: Int, _ r: Int, comma: Bool) throws -> Bool {
            if k >= 0, let p = present[k], !p[r] { return false }
            let x: Double? = k < 0 ? times[r] : doubles[k]?[r]
            if let x, !x.isFinite { return false }
            try out.reserve(64)
            if comma { out.byte(UInt8(ascii: ",")); out.byte(UInt8(ascii: " ")) }
            for c in key { out.byte(c) }
            if let x { out.double(x) } else if let i = ints[k]?[r] { out.int(i) } else { return false }
            return true
        }
        try b.writeTimes.forEachRun { rows, w in
            try out.reserve(64)
            if !first { out.byte(UInt8(ascii: ",")) }
            first = false
            try out.append("\n{\"timestamp\": ")
            try out.reserve(32)
            out.double(w)
            try out.append(", \"sample\": [")
            for e in rows {
                try out.reserve(2)
                if e > rows.lowerBound { out.byte(UInt8(ascii: ",")) }
                out.byte(UInt8(ascii: "{"))
                var any = false
                for top in keys.tops {
                    if let k = top.column {
                        if try value(top.text, k, e, comma: any) { any = true }
                        continue
                    }
                    try out.reserve(64)
                    if any { out.byte(UInt8(ascii: ",")); out.byte(UInt8(ascii: " ")) }
                    for c in top.text { out.byte(c) }
                    out.byte(UInt8(ascii: "{"))
                    var inner = false
                    for (text, k) in top.nested {
                        if try value(text, k, e, comma: inner) { inner = true }
                    }
                    try out.reserve(1)
                    out.byte(UInt8(ascii: "}"))
                    any = true
                }
                try out.reserve(1)
                out.byte(UInt8(ascii: "}"))
            }
            try out.append("]}")
        }
    }
}
