import CIsal
import Foundation
import SensorKitModel
#if canImport(Glibc)
import Glibc
import Simulator
import StudyStore
import Importers
#endif

/// The pieces of `sensorium bench store`: a 50 Hz accelerometer MyHeartCounts CSV
/// generator, and one summary (hourly mean magnitude, daily 5/50/95th percentiles of the
/// magnitude) computed the same way over any `SampleSource`.
public enum StoreBenchmark {
    public static let device = SRDevice(name: "iPhone", model: "iPhone", systemName: "iOS", systemVersion: "17.4",
                                        productType: "iPhone15,2", kind: .phone)
    static let deviceText = "\"<SRDevice: 0x2834; name = iPhone; model = iPhone; systemName = iOS; systemVersion = 17.4; productType = iPhone15,2>\""

    /// Writes `seconds` of 50 Hz accelerometer from `start` as one MyHeartCounts CSV file
    /// (60-s write batches; x, y, z with 6 decimals, timestamps with 2). Returns the row count.
    @discardableResult
    public static func writeAccelerometerCSV(path: String, start: Double, seconds: Int) throws -> Int {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        guard let h = FileHandle(forWritingAtPath: path) else { throw ImportError(file: path, "cannot write") }
        defer { try? h.close() }
        var out = [UInt8]()
        out.reserveCapacity(1 << 22)
        out.append(contentsOf: Array("timestamp,identifier,x,y,z,device\n".utf8))
        let dev = Array(deviceText.utf8)
        let rows = seconds * 50
        var cs = Int64((start * 100).rounded())
        var state: UInt64 = 0x1234_5678
        func digits(_ v: Int64, _ buf: inout [UInt8]) {
            var v = v
            if v == 0 { buf.append(48); return }
            var tmp: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            var n = 0
            withUnsafeMutableBytes(of: &tmp) { t in
                while v > 0 { t[n] = UInt8(48 + v % 10); v /= 10; n += 1 }
                while n > 0 { n -= 1; buf.append(t[n]) }
            }
        }
        func fixed(_ micro: Int64, _ buf: inout [UInt8]) {
            var m = micro
            if m < 0 { buf.append(45); m = -m }
            digits(m / 1_000_000, &buf)
            buf.append(46)
            var frac = m % 1_000_000
            var d: [UInt8] = [48, 48, 48, 48, 48, 48]
            for k in (0..<6).reversed() { d[k] = UInt8(48 + frac % 10); frac /= 10 }
            buf.append(contentsOf: d)
        }
        for i in 0..<rows {
            digits(cs / 100, &out)
            out.append(46)
            let c = cs % 100
            out.append(UInt8(48 + c / 10)); out.append(UInt8(48 + c % 10))
            out.append(44)
            digits(Int64(i / 3_000) + 1, &out)
            out.append(44)
            // Gravity on z, a slow sway and noise.
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let noise = Int64((state >> 33) % 40_001) - 20_000
            let sway = Int64(200_000 * sin(Double(i) * 0.0005))
            fixed(sway + noise, &out); out.append(44)
            fixed(noise / 2 - 10_000, &out); out.append(44)
            fixed(-980_000 + noise, &out); out.append(44)
            out.append(contentsOf: dev)
            out.append(10)
            cs += 2
            if out.count > (1 << 22) - 256 {
                try h.write(contentsOf: out)
                out.removeAll(keepingCapacity: true)
            }
        }
        try h.write(contentsOf: out)
        return rows
    }

    /// What the summary found.
    public struct Summary: Sendable, Equatable {
        public var samples = 0
        public var hours = 0
        public var days = 0
        /// Hourly mean magnitudes, in order.
        public var hourlyMeans: [Double] = []
        /// Per local day: 5th, 50th and 95th percentile of the magnitude.
        public var dailyPercentiles: [[Double]] = []
    }

    /// Hourly mean magnitude and daily percentiles of accelerometer samples written in
    /// (start, end], read in one-hour pieces (memory: one day of magnitudes).
    public static func summarise(_ source: any SampleSource, participant: String, device: SRDevice,
                                 start: Double, end: Double, timeZone: TimeZone) throws -> Summary {
        var s = Summary()
        var hourKey = Int.min, hourSum = 0.0, hourCount = 0
        var dayKey = Int.min
        var day: [Double] = []
        day.reserveCapacity(4_400_000)
        var offset = LocalTime.offset(at: start, timeZone)
        var offsetValidUntil = start + 3_600
        func closeDay() {
            guard !day.isEmpty else { return }
            s.dailyPercentiles.append([quantile(&day, 0.05), quantile(&day, 0.5), quantile(&day, 0.95)])
            s.days += 1
            day.removeAll(keepingCapacity: true)
        }
        var t = start
        while t < end {
            let hi = min(end, t + 3_600)
            let b = try source.samples(participant: participant, sensor: .accelerometer, device: device, writtenAfter: t, through: hi)
            t = hi
            guard b.count > 0, let (xs, ys, zs) = b.xyz else { continue }
            let times = b.times
            for i in 0..<b.count {
                let ti = times[i]
                if ti >= offsetValidUntil {
                    offset = LocalTime.offset(at: ti, timeZone)
                    offsetValidUntil = (ti / 3_600).rounded(.down) * 3_600 + 3_600
                }
                let local = ti + offset
                let h = Int((local / 3_600).rounded(.down))
                if h != hourKey {
                    if hourCount > 0 { s.hourlyMeans.append(hourSum / Double(hourCount)); s.hours += 1 }
                    hourKey = h; hourSum = 0; hourCount = 0
                    let d = Int((local / 86_400).rounded(.down))
                    if d != dayKey { closeDay(); dayKey = d }
                }
                let m = (xs[i] * xs[i] + ys[i] * ys[i] + zs[i] * zs[i]).squareRoot()
                hourSum += m
                hourCount += 1
                day.append(m)
            }
            s.samples += b.count
        }
        if hourCount > 0 { s.hourlyMeans.append(hourSum / Double(hourCount)); s.hours += 1 }
        closeDay()
        return s
    }

    /// Linear-interpolated quantile by selection (reorders `v`).
    static func quantile(_ v: inout [Double], _ p: Double) -> Double {
        guard !v.isEmpty else { return .nan }
        let h = Double(v.count - 1) * p
        let lo = Int(h.rounded(.down))
        let a = select(&v, lo)
        if lo + 1 >= v.count { return a }
        // The next order statistic is the minimum of the upper part.
        var b = Double.infinity
        for k in (lo + 1)..<v.count where v[k] < b { b = v[k] }
        return a + (h - Double(lo)) * (b - a)
    }

    /// The k-th smallest value; afterwards v[..<k] ≤ v[k] ≤ v[(k+1)...].
    static func select(_ v: inout [Double], _ k: Int) -> Double {
        var lo = 0, hi = v.count - 1
        var rng: UInt64 = 0x9E37_79B9_7F4A_7C15
        v.withUnsafeMutableBufferPointer { a in
            while lo < hi {
                rng = rng &* 6_364_136_223_846_793_005 &+ 1
                let pivot = a[lo + Int((rng >> 33) % UInt64(hi - lo + 1))]
                var i = lo, j = hi
                while i <= j {
                    while a[i] < pivot { i += 1 }
                    while a[j] > pivot { j -= 1 }
                    if i <= j { a.swapAt(i, j); i += 1; j -= 1 }
                }
                if k <= j { hi = j } else if k >= i { lo = i } else { break }
            }
        }
        return v[k]
    }

    /// User + system CPU seconds of this process so far (all threads).
    static func processCPUSeconds() -> Double { CPUTime.ofThisProcess().total }

    static func loadAverage() -> String {
        (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3).joined(separator: " ") ?? "?"
    }

    /// Peak resident memory of this process since the last `resetPeakResident()` (or since
    /// it started), bytes.
    public static func peakResidentBytes() -> Int {
        if let kB = statusField("VmHWM") { return kB * 1024 }
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss * 1024
    }

    /// Resident memory now, bytes (0 when unknown).
    static func residentBytes() -> Int { (statusField("VmRSS") ?? 0) * 1024 }

    /// Returns freed heap memory to the system and restarts the peak (Linux: clear_refs 5),
    /// so that `peakResidentBytes()` measures the next step alone.
    static func resetPeakResident() {
        #if canImport(Glibc)
        typealias MallocTrim = @convention(c) (Int) -> Int32
        if let handle = dlopen(nil, RTLD_NOW), let sym = dlsym(handle, "malloc_trim") {
            _ = unsafeBitCast(sym, to: MallocTrim.self)(0)
        }
        #endif
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }

    /// A `kB` field of /proc/self/status.
    static func statusField(_ name: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
            return Int(line.dropFirst(name.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
        }
        return nil
    }

    /// The native path: a simulated participant-week of phone and watch accelerometer exported
    /// (`sensorium export`), imported (`import --format native`), imported again, its size,
    /// and every chunk decoded.
    static func runNative(days: Int, start: Double, dir: URL, summary: inout [(String, Double)], output: (String) -> Void) throws {
        func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
        func secs(_ t: UInt64) -> Double { Double(now() - t) / 1e9 }
        let participant = ParticipantDescription(id: "P1", timeZone: "Europe/Paris", watch: .defaultWatch,
                                                 profile: ParticipantProfile(preset: .officeWorker))
        let sim = try SimulatedSource(seed: 1, participants: [participant])
        let end = start + Double(days) * 86_400
        let study = NativeFormat.Study(start: start, end: end, participants: [.init(id: "P1", timeZone: "Europe/Paris")],
                                       sensors: [.accelerometer])
        let folder = dir.appendingPathComponent("native-\(days)d")
        resetPeakResident()
        var t = now()
        var cpu0 = processCPUSeconds()
        let exported = try NativeFormat.export(study, source: sim, to: folder)
        var s = secs(t)
        var cpu = processCPUSeconds() - cpu0
        summary.append(("native export", Double(exported.rows) / s))
        let csvBytes = RecordedStore.bytes(under: folder.path)
        output(String(format: "  native export, %d day(s) of phone + watch accelerometer: %d rows (%.0f MB) in %.2f s = %.2f M rows/s (target ≥ 5: %.2fx); %.2f CPU-s (%.2f M rows per CPU-s); peak memory %.0f MB",
                      days, exported.rows, Double(csvBytes) / 1e6, s, Double(exported.rows) / s / 1e6, Double(exported.rows) / s / 5e6,
                      cpu, Double(exported.rows) / cpu / 1e6, Double(peakResidentBytes()) / 1e6))
        output("  " + readIntoPageCache(folder.path))
        let path = dir.appendingPathComponent("native-\(days)d.sqlite").path
        let store = try RecordedStore(path: path)
        let plainRate = try importTwice(ImportRequest(format: .native, sources: [folder.path], progressBar: false), into: store,
                                        label: "native", key: "native", inputBytes: csvBytes, unit: "CSV", summary: &summary, output: output).rate
        // One day: the zstd pass is compared with this import (the same files); more: with the first day's own.
        if days == 1 {
            try runNativeZstd(study: study, source: sim, start: start, dir: dir, plain: (folder, plainRate, exported.rows), summary: &summary, output: output)
        }
        try FileManager.default.removeItem(at: folder)
        try store.checkpoint()
        let used = try store.usedBytes()
        let bytesPerSample = Double(used) / Double(max(exported.rows, 1))
        output(String(format: "  native store: %.0f MB for %d samples = %.2f B/sample (target ≤ 16: %.2fx)",
                      Double(used) / 1e6, exported.rows, bytesPerSample, 16 / bytesPerSample))
        // Twice: the first pass may read pages from disk, the second from the page cache.
        var decoded = 0
        s = .infinity
        cpu = .infinity
        for _ in 0..<2 {
            t = now()
            cpu0 = processCPUSeconds()
            decoded = try store.decodeEveryChunk()
            s = min(s, secs(t))
            cpu = min(cpu, processCPUSeconds() - cpu0)
        }
        output(String(format: "  native store decoded (every chunk, every column, one thread; best of 2): %d samples in %.3f s = %.0f M samples/s (target ≥ 200: %.2fx); %.3f CPU-s (%.0f M samples per CPU-s)",
                      decoded, s, Double(decoded) / s / 1e6, Double(decoded) / s / 200e6, cpu, Double(decoded) / cpu / 1e6))
        try store.close()
        if days > 1 { try runNativeZstd(study: study, source: sim, start: start, dir: dir, plain: nil, summary: &summary, output: output) }
    }

    /// A native export's first day, plain and with every sample file zstd-compressed under
    /// its own name (compression is recognised by the bytes), each imported into a store of
    /// its own: the compressed import's time per row against the plain one's. `plain`: the
    /// first day exported and imported already (its folder, kept, and its import's rate).
    static func runNativeZstd(study: NativeFormat.Study, source: any SampleSource, start: Double, dir: URL, plain imported: (folder: URL, rate: Double, rows: Int)?,
                              summary: inout [(String, Double)], output: (String) -> Void) throws {
        func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
        func secs(_ t: UInt64) -> Double { Double(now() - t) / 1e9 }
        var day = study
        day.end = start + 86_400
        let plain = imported?.folder ?? dir.appendingPathComponent("native-day"), zstd = dir.appendingPathComponent("native-day-zstd")
        let rows = try imported?.rows ?? NativeFormat.export(day, source: source, to: plain).rows
        let files = (FileManager.default.enumerator(atPath: plain.path)?.compactMap { $0 as? String } ?? []).sorted()
            .filter { f in
                var isFolder: ObjCBool = false
                return FileManager.default.fileExists(atPath: plain.path + "/" + f, isDirectory: &isFolder) && !isFolder.boolValue
            }
        let t = now()
        let compressed = try NativeFormat.inParallel(files.count) { k -> Int64 in
            let target = zstd.path + "/" + files[k]
            try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            if files[k] == "manifest.json" {
                try FileManager.default.copyItem(atPath: plain.path + "/" + files[k], toPath: target)
                return 0
            }
            return try ZstdCompressor.compressFile(plain.path + "/" + files[k], to: target,
                                                   workers: max(1, ProcessInfo.processInfo.activeProcessorCount / max(1, files.count - 1)))
        }.reduce(0, +)
        let plainBytes = RecordedStore.bytes(under: plain.path)
        output(String(format: "  native export, the first day: %d rows, %.0f MB of CSV; its sample files zstd-compressed under the same names (level %d): %.0f MB in %.2f s",
                      rows, Double(plainBytes) / 1e6, ZstdCompressor.defaultLevel, Double(compressed) / 1e6, secs(t)))
        var plainRate = imported?.rate ?? 0
        for (folder, key) in [(plain, "plain"), (zstd, "zstd")] where key == "zstd" || imported == nil {
            output("  " + readIntoPageCache(folder.path))
            let store = try RecordedStore(path: dir.appendingPathComponent("native-day-\(key).sqlite").path)
            let label = key == "plain" ? "native, the first day" : "native zstd, the first day"
            let rate = try importTwice(ImportRequest(format: .native, sources: [folder.path], progressBar: false), into: store,
                                       label: label, key: key == "plain" ? "native day" : "native.zstd day",
                                       inputBytes: key == "plain" ? plainBytes : compressed, unit: key == "plain" ? "CSV" : "zstd",
                                       summary: &summary, output: output).rate
            try store.close()
            if key == "plain" { plainRate = rate } else { output(compressedRatio(label, rate: rate, plainRate: plainRate)) }
            try FileManager.default.removeItem(at: folder)
        }
    }

    /// Puts the file at `path`, or the files under it, on the disk, then reads them once, so that the import after
    /// it is timed on files in the page cache, as right after a download: the same condition
    /// for every format and run (the writers bypass the cache, `FileOutput`), and no kernel
    /// write-back of gigabytes running on the import's cores. Returns a line saying so.
    static func readIntoPageCache(_ path: String) -> String {
        let t = DispatchTime.now().uptimeNanoseconds
        sync()
        let synced = Double(DispatchTime.now().uptimeNanoseconds - t) / 1e9
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 1 << 22, alignment: 4_096)
        defer { buffer.deallocate() }
        var bytes = 0
        var isFolder: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: path, isDirectory: &isFolder)
        let files = isFolder.boolValue
            ? (FileManager.default.enumerator(atPath: path)?.compactMap { $0 as? String } ?? []).sorted().map { path + "/" + $0 }
            : [path]
        for f in files {
            let fd = open(f, O_RDONLY)
            guard fd >= 0 else { continue }
            while true {
                let k = read(fd, buffer, 1 << 22)
                if k <= 0 { break }
                bytes += k
            }
            close(fd)
        }
        let s = Double(DispatchTime.now().uptimeNanoseconds - t) / 1e9
        return String(format: "input on disk after %.2f s, then read once into the page cache (%.0f MB in %.2f s): the imports below read it from memory",
                      synced, Double(bytes) / 1e6, s - synced)
    }

    /// The first (importing) pass of `importTwice`: rows per second, wall and CPU seconds.
    struct ImportMeasure {
        var rate: Double
        var seconds: Double
        var cpuSeconds: Double
    }

    /// Imports `request` into `store` twice (import, then re-import of the same files, all
    /// duplicates) and prints each pass's rate against its target; adds both rates to `summary`
    /// as "KEY import" and "KEY re-import". Returns the import's measure (its rate in rows/s).
    @discardableResult
    static func importTwice(_ request: ImportRequest, into store: RecordedStore, label: String, key: String, inputBytes: Int64,
                            unit: String, summary: inout [(String, Double)], output: (String) -> Void) throws -> ImportMeasure {
        var firstRate = 0.0
        var first = ImportMeasure(rate: 0, seconds: 0, cpuSeconds: 0)
        for pass in ["import", "re-import"] {
            resetPeakResident()
            let t = DispatchTime.now().uptimeNanoseconds
            let cpu0 = processCPUSeconds()
            let stats = try store.importData(request)
            let s = Double(DispatchTime.now().uptimeNanoseconds - t) / 1e9
            let cpu = processCPUSeconds() - cpu0
            let rate = Double(stats.rowsRead) / s
            let target = pass == "import" ? String(format: "target ≥ 7: %.2fx", rate / 7e6)
                : String(format: "target ≥ the import's %.2f: %.2fx", firstRate / 1e6, rate / firstRate)
            if pass == "import" {
                firstRate = rate
                first = ImportMeasure(rate: rate, seconds: s, cpuSeconds: cpu)
            }
            summary.append(("\(key) \(pass)", rate))
            output(String(format: "  %@ %@: %.2f s = %.2f M rows/s (%@), %.0f MB/s of %@; %.2f CPU-s = %.2f cores busy (%.2f M rows per CPU-s); %d rows stored, %d duplicates dropped; peak memory %.0f MB",
                          label, pass, s, rate / 1e6, target, Double(inputBytes) / 1e6 / s, unit, cpu, cpu / s, Double(stats.rowsRead) / cpu / 1e6,
                          stats.rowsStored, stats.duplicatesDropped, Double(peakResidentBytes()) / 1e6))
        }
        return first
    }

    /// A line saying how fast the compressed import could be at best: every file under
    /// `root` (a file, or a folder's files) decoded alone (`decodeToEnd`: the importers' decoder, one thread, nothing parsed),
    /// against the import of the same files uncompressed (`plain`, `plainBytes` of them).
    /// Two floors of the ratio: the cores' (plain CPU-s + decoding CPU-s shared by this
    /// machine's cores) and one file's (its bytes decode one after another, so a file
    /// imports no faster than its decoder: the plain import's MB/s over the decoder's).
    static func decoderFloor(_ label: String, root: String, decoder: String, plain: ImportMeasure, plainBytes: Int64) throws -> String {
        let isFile = (try? FileManager.default.attributesOfItem(atPath: root)[.type] as? FileAttributeType) == .typeRegular
        let files = isFile ? [root] : (FileManager.default.enumerator(atPath: root)?.compactMap { $0 as? String } ?? []).sorted()
            .map { root + "/" + $0 }
            .filter { (try? FileManager.default.attributesOfItem(atPath: $0)[.type] as? FileAttributeType) == .typeRegular }
        let t = DispatchTime.now().uptimeNanoseconds
        let cpu0 = processCPUSeconds()
        var bytes: Int64 = 0
        for f in files { bytes += try decodeToEnd(f) }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - t) / 1e9
        let cpu = processCPUSeconds() - cpu0
        let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
        let decodeRate = Double(bytes) / 1e6 / seconds, plainRate = Double(plainBytes) / 1e6 / plain.seconds
        let coresFloor = (plain.cpuSeconds + cpu) / cores / plain.seconds
        let fileFloor = plainRate / decodeRate
        return String(format: "  %@: the decoder alone (%@, one thread, nothing parsed) takes %.2f s, %.2f CPU-s for %.0f MB = %.0f MB/s; the uncompressed import took %.2f s, %.2f CPU-s = %.0f MB/s. Floors of the ratio here: (%.2f + %.2f CPU-s) over %.0f cores = %.2fx; one file imports no faster than its decoder = %.2fx",
                      label, decoder, seconds, cpu, Double(bytes) / 1e6, decodeRate, plain.seconds, plain.cpuSeconds, plainRate,
                      plain.cpuSeconds, cpu, cores, coresFloor, fileFloor)
    }

    /// A line comparing a compressed import's rate with the uncompressed import's: how many
    /// times its time per row (target ≤ 1.3).
    static func compressedRatio(_ label: String, rate: Double, plainRate: Double) -> String {
        String(format: "  %@: %.2f M rows/s against %.2f uncompressed: %.2fx the uncompressed import's time per row (target ≤ 1.3)",
               label, rate / 1e6, plainRate / 1e6, plainRate / rate)
    }

    /// The MyDataHelps path: the native path's simulated participant-week of phone and watch
    /// accelerometer written as a MyDataHelps JSON tree (`MDHWriter`: a file per device and
    /// day, an item per write batch), imported and imported again. `keepFiles`: leave the JSON
    /// tree in `dir` (to profile an import of it).
    static func runMDH(days: Int, start: Double, dir: URL, keepFiles: Bool, summary: inout [(String, Double)], output: (String) -> Void) throws {
        func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
        func secs(_ t: UInt64) -> Double { Double(now() - t) / 1e9 }
        let participant = ParticipantDescription(id: "P1", timeZone: "Europe/Paris", watch: .defaultWatch,
                                                 profile: ParticipantProfile(preset: .officeWorker))
        let sim = try SimulatedSource(seed: 1, participants: [participant])
        let devices = sim.devices(participant: "P1").filter { Sensor.accelerometer.deviceKinds.contains($0.kind) }
        let root = dir.appendingPathComponent("mdh-\(days)d").path
        let end = start + Double(days) * 86_400
        let t = now()
        let rows = try NativeFormat.inParallel(devices.count) { k in
            try MDHWriter.write(source: sim, participant: "P1", device: devices[k], deviceID: devices[k].kind.rawValue,
                                sensor: .accelerometer, start: start, end: end, root: root)
        }.reduce(0, +)
        let size = RecordedStore.bytes(under: root)
        let generated = secs(t)
        output(String(format: "  MyDataHelps JSON, %d day(s) of phone + watch accelerometer (a file per device and day): generated %d rows (%.0f MB of JSON) in %.2f s",
                      days, rows, Double(size) / 1e6, generated))
        output("  " + readIntoPageCache(root))
        let path = dir.appendingPathComponent("mdh-\(days)d.sqlite").path
        let store = try RecordedStore(path: path)
        let plain = try importTwice(ImportRequest(format: .mdhJSON, sources: [root], progressBar: false), into: store,
                                    label: "MyDataHelps JSON", key: "mdh-json", inputBytes: size, unit: "JSON", summary: &summary, output: output)
        try store.close()
        // Exports are downloaded as .json.gz: the first day of both devices compressed, then
        // imported into a store of its own (inflating is part of the import).
        let gzRoot = dir.appendingPathComponent("mdh-\(days)d-gz").path
        let firstDay = MDHWriter.dayName(start) + ".json"
        let tg = now()
        var gzBytes: Int64 = 0
        for f in (FileManager.default.enumerator(atPath: root)?.compactMap { $0 as? String } ?? []).sorted() where f.hasSuffix("/" + firstDay) {
            let target = gzRoot + "/" + f + ".gz"
            try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            gzBytes += try gzip(root + "/" + f, to: target)
        }
        output(String(format: "  MyDataHelps JSON.gz, the first day of both devices: %.0f MB compressed (gzip, ISA-L level 1) in %.2f s",
                      Double(gzBytes) / 1e6, secs(tg)))
        output("  " + readIntoPageCache(gzRoot))
        // The compressed passes are compared with the same files uncompressed: with more than
        // one day, the first day's plain files imported on their own.
        var firstDayPlain = plain, firstDayBytes = size
        if days > 1 {
            let firstRoot = dir.appendingPathComponent("mdh-\(days)d-first").path
            var firstBytes: Int64 = 0
            for f in (FileManager.default.enumerator(atPath: root)?.compactMap { $0 as? String } ?? []).sorted() where f.hasSuffix("/" + firstDay) {
                let target = firstRoot + "/" + f
                try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try FileManager.default.copyItem(atPath: root + "/" + f, toPath: target)
                firstBytes += RecordedStore.bytes(under: target)
            }
            output("  " + readIntoPageCache(firstRoot))
            let firstStore = try RecordedStore(path: dir.appendingPathComponent("mdh-first.sqlite").path)
            firstDayPlain = try importTwice(ImportRequest(format: .mdhJSON, sources: [firstRoot], progressBar: false), into: firstStore,
                                       label: "MyDataHelps JSON, the first day", key: "mdh-json first day", inputBytes: firstBytes,
                                       unit: "JSON", summary: &summary, output: output)
            firstDayBytes = firstBytes
            try firstStore.close()
            try FileManager.default.removeItem(atPath: firstRoot)
        }
        let gzStore = try RecordedStore(path: dir.appendingPathComponent("mdh-gz.sqlite").path)
        let gzRate = try importTwice(ImportRequest(format: .mdhJSON, sources: [gzRoot], progressBar: false), into: gzStore,
                                     label: "MyDataHelps JSON.gz", key: "mdh-json.gz", inputBytes: gzBytes, unit: "gzip", summary: &summary, output: output).rate
        output(compressedRatio("MyDataHelps JSON.gz", rate: gzRate, plainRate: firstDayPlain.rate))
        output(try decoderFloor("MyDataHelps JSON.gz", root: gzRoot, decoder: "ISA-L inflate", plain: firstDayPlain, plainBytes: firstDayBytes))
        try gzStore.close()
        // MyHeartCounts uploads are zstd-compressed: the same first day as .json.zstd
        // (libzstd's streaming compression at its default level, with checksums).
        let zstdRoot = dir.appendingPathComponent("mdh-\(days)d-zstd").path
        let tz = now()
        var zstdBytes: Int64 = 0
        for f in (FileManager.default.enumerator(atPath: root)?.compactMap { $0 as? String } ?? []).sorted() where f.hasSuffix("/" + firstDay) {
            let target = zstdRoot + "/" + f + ".zstd"
            try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            zstdBytes += try ZstdCompressor.compressFile(root + "/" + f, to: target, workers: ProcessInfo.processInfo.activeProcessorCount)
        }
        output(String(format: "  MyDataHelps JSON.zstd, the first day of both devices: %.0f MB compressed (zstd level %d) in %.2f s",
                      Double(zstdBytes) / 1e6, ZstdCompressor.defaultLevel, secs(tz)))
        output("  " + readIntoPageCache(zstdRoot))
        let zstdStore = try RecordedStore(path: dir.appendingPathComponent("mdh-zstd.sqlite").path)
        let zstdRate = try importTwice(ImportRequest(format: .mdhJSON, sources: [zstdRoot], progressBar: false), into: zstdStore,
                                       label: "MyDataHelps JSON.zstd", key: "mdh-json.zstd", inputBytes: zstdBytes, unit: "zstd",
                                       summary: &summary, output: output).rate
        output(compressedRatio("MyDataHelps JSON.zstd", rate: zstdRate, plainRate: firstDayPlain.rate))
        output(try decoderFloor("MyDataHelps JSON.zstd", root: zstdRoot, decoder: "libzstd", plain: firstDayPlain, plainBytes: firstDayBytes))
        try zstdStore.close()
        if !keepFiles {
            try FileManager.default.removeItem(atPath: root)
            try FileManager.default.removeItem(atPath: gzRoot)
            try FileManager.default.removeItem(atPath: zstdRoot)
        }
    }

    /// Uploads in the many-uploads tree: a participant-day of 50 Hz accelerometer in
    /// half-hour uploads (90,000 rows, about 15 MB of CSV, 1.3 MB zstd-compressed each).
    static let uploadsPerDay = 48

    /// An upload's name as MyHeartCounts makes them (a fresh UUID each), here fixed: the k-th
    /// upload's name sorts k-th, so every tree is read in time order.
    static func uploadName(_ k: Int) -> String {
        String(format: "%08X-%04X-4%03X-8%03X-%012X", 0x1A2B_0000 + k, k, k, k, 0x5EED_0000 + k)
    }

    /// The MyHeartCounts layout: a participant-day of 50 Hz accelerometer as many uploads
    /// (`users/bench/SensorKit/<sensor id>/<UUID>.csv`, `uploadsPerDay` of them), imported
    /// plain, `.csv.zstd` (as MyHeartCounts uploads) and `.csv.gz`, each into a store of its
    /// own, with the compressed imports' time per row against the plain one's. Files are
    /// opened ahead as this machine's cores allow (`ReadAhead.forThisMachine`); when that is
    /// more than one, the `.zstd` tree is also imported one file ahead (as before), to show
    /// what decoding several uploads at once gives.
    /// `keepFiles`: leave the three trees in `dir` (to time or profile an import of them).
    static func runUploads(start: Double, dir: URL, keepFiles: Bool, summary: inout [(String, Double)], output: (String) -> Void) throws {
        func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
        func secs(_ t: UInt64) -> Double { Double(now() - t) / 1e9 }
        let ahead = ReadAhead.forThisMachine
        let uploads = uploadsPerDay, seconds = 86_400 / uploadsPerDay
        let folder = "users/bench/SensorKit/\(Sensor.accelerometer.identifier)"
        let trees = ["plain": dir.appendingPathComponent("uploads-plain").path, "zstd": dir.appendingPathComponent("uploads-zstd").path,
                     "gz": dir.appendingPathComponent("uploads-gz").path]
        for root in trees.values { try FileManager.default.createDirectory(atPath: root + "/" + folder, withIntermediateDirectories: true) }
        let t = now()
        let sizes = try NativeFormat.inParallel(uploads) { k -> (Int64, Int64, Int64) in
            let plain = trees["plain"]! + "/" + folder + "/" + uploadName(k) + ".csv"
            try writeAccelerometerCSV(path: plain, start: start + Double(k * seconds), seconds: seconds)
            let zstd = try ZstdCompressor.compressFile(plain, to: trees["zstd"]! + "/" + folder + "/" + uploadName(k) + ".csv.zstd")
            let gz = try gzip(plain, to: trees["gz"]! + "/" + folder + "/" + uploadName(k) + ".csv.gz")
            return (RecordedStore.bytes(under: plain), zstd, gz)
        }
        let plainBytes = sizes.reduce(0) { $0 + $1.0 }, zstdBytes = sizes.reduce(0) { $0 + $1.1 }, gzBytes = sizes.reduce(0) { $0 + $1.2 }
        output(String(format: "  many uploads (the MyHeartCounts layout: users/<uid>/SensorKit/<sensor id>/<UUID>.csv.zstd): a participant-day of accelerometer in %d half-hour uploads of %d rows; %.0f MB of CSV, %.0f MB as .csv.zstd (level %d), %.0f MB as .csv.gz; written in %.2f s",
                      uploads, seconds * 50, Double(plainBytes) / 1e6, Double(zstdBytes) / 1e6, ZstdCompressor.defaultLevel, Double(gzBytes) / 1e6, secs(t)))
        output("  files opened ahead: \(ahead) (\(ProcessInfo.processInfo.activeProcessorCount) cores: an import keeps about two busy, a compressed upload ahead decodes on each further one, at most 8)")
        var rates: [String: Double] = [:]
        for (key, unit) in [("plain", "CSV"), ("zstd", "zstd"), ("gz", "gzip")] {
            output("  " + readIntoPageCache(trees[key]!))
            let store = try RecordedStore(path: dir.appendingPathComponent("uploads-\(key).sqlite").path)
            var request = ImportRequest(format: .mhc, sources: [trees[key]!], timeZone: "UTC", progressBar: false)
            request.readAhead = ahead
            let label = key == "plain" ? "many uploads CSV" : "many uploads CSV.\(key)"
            rates[key] = try importTwice(request, into: store, label: label, key: key == "plain" ? "mhc uploads" : "mhc uploads.\(key)",
                                         inputBytes: key == "plain" ? plainBytes : key == "zstd" ? zstdBytes : gzBytes, unit: unit,
                                         summary: &summary, output: output).rate
            try store.close()
            if key != "plain" { output(compressedRatio(label, rate: rates[key]!, plainRate: rates["plain"]!)) }
            if key == "zstd" && ahead.files > 1 {
                // The same files one ahead, as imports read them before: what several ahead give.
                let one = try RecordedStore(path: dir.appendingPathComponent("uploads-zstd-one.sqlite").path)
                request.readAhead = ReadAhead(files: 1)
                let oneRate = try importTwice(request, into: one, label: "many uploads CSV.zstd, one file ahead", key: "mhc uploads.zstd one ahead",
                                              inputBytes: zstdBytes, unit: "zstd", summary: &summary, output: output).rate
                try one.close()
                output(compressedRatio("many uploads CSV.zstd, one file ahead", rate: oneRate, plainRate: rates["plain"]!))
                output(String(format: "  many uploads CSV.zstd: %d files ahead take %.2fx the time per row of one file ahead", ahead.files, oneRate / rates["zstd"]!))
            }
        }
        if !keepFiles { for root in trees.values { try FileManager.default.removeItem(atPath: root) } }
    }

    /// Writes `source` gzip-compressed to `target` (ISA-L's deflate, level 1, as fast as the
    /// benchmark needs); returns the compressed size.
    static func gzip(_ source: String, to target: String) throws -> Int64 {
        let input = try FileSource(path: source)
        var out = FileOutput()
        try out.open(target)
        let stream = UnsafeMutablePointer<isal_zstream>.allocate(capacity: 1)
        let levelBytes = 1 << 22, chunk = 1 << 20
        let level = UnsafeMutablePointer<UInt8>.allocate(capacity: levelBytes)
        let inBuf = UnsafeMutablePointer<UInt8>.allocate(capacity: chunk), outBuf = UnsafeMutablePointer<UInt8>.allocate(capacity: chunk)
        defer { stream.deallocate(); level.deallocate(); inBuf.deallocate(); outBuf.deallocate() }
        isal_deflate_init(stream)
        stream.pointee.gzip_flag = UInt16(IGZIP_GZIP)
        stream.pointee.level = 1
        stream.pointee.level_buf = level
        stream.pointee.level_buf_size = UInt32(levelBytes)
        var written: Int64 = 0
        repeat {
            let n = try input.read(into: inBuf, count: chunk)
            stream.pointee.next_in = inBuf
            stream.pointee.avail_in = UInt32(n)
            stream.pointee.end_of_stream = n == 0 ? 1 : 0
            repeat {
                stream.pointee.next_out = outBuf
                stream.pointee.avail_out = UInt32(chunk)
                guard isal_deflate(stream) == COMP_OK else { throw ImportError(file: target, "gzip compression failed") }
                let k = chunk - Int(stream.pointee.avail_out)
                try out.append(bytes: UnsafeBufferPointer(start: outBuf, count: k))
                written += Int64(k)
            } while stream.pointee.avail_out == 0
        } while stream.pointee.internal_state.state != ZSTATE_END
        try out.close()
        return written
    }

    /// The whole benchmark; prints through `output`. `directory`: work there and keep its
    /// files (the MyDataHelps JSON tree and the many-uploads trees too), instead of a temporary folder removed at the end.
    /// `parts`: "native" (export, native import plain and zstd-compressed, size, decode),
    /// "mhc" (MyHeartCounts CSV import and the summaries), "mdh" (MyDataHelps JSON import),
    /// "uploads" (a MyHeartCounts tree of many uploads, plain, zstd and gzip); all when empty. Ends with
    /// one line of every rate measured.
    public static func run(weekDays: Int = 1, directory: URL? = nil, parts: Set<String> = [], output: (String) -> Void) throws {
        let dir = directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("sensorium-bench-store-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { if directory == nil { try? FileManager.default.removeItem(at: dir) } }
        SimulatorBenchmark.tuneAllocator()
        let start = 1_772_409_600.0 // 2026-03-02 00:00 UTC, a Monday
        let zone = TimeZone(identifier: "UTC")!
        func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
        func secs(_ t: UInt64) -> Double { Double(now() - t) / 1e9 }
        output("sensorium bench store: 50 Hz accelerometer, native, MyDataHelps JSON and MyHeartCounts CSV → SQLite store (chunks of \(RecordedStore.chunkRows) rows)")
        output("  machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, load average \(loadAverage()) (other processes slow wall-clock figures)")
        output("  long runs: \(weekDays) day(s) (--days; 7 gives the participant-week figures). Each compressed import is compared with the same files plain: \"N x the uncompressed import's time per row\" (target ≤ 1.3); \"cores busy\" is its CPU-seconds over its wall seconds")
        var summary: [(String, Double)] = []
        defer {
            if !summary.isEmpty {
                output("  rates (M rows/s, this run): " + summary.map { String(format: "%@ %.2f", $0.0, $0.1 / 1e6) }.joined(separator: "; ")
                       + " (targets: export ≥ 5, import ≥ 7, re-import ≥ import)")
            }
        }
        if parts.isEmpty || parts.contains("native") {
            try runNative(days: weekDays, start: start, dir: dir, summary: &summary, output: output)
        }
        if parts.isEmpty || parts.contains("mdh") {
            try runMDH(days: weekDays, start: start, dir: dir, keepFiles: directory != nil, summary: &summary, output: output)
        }
        if parts.isEmpty || parts.contains("uploads") {
            try runUploads(start: start, dir: dir, keepFiles: directory != nil, summary: &summary, output: output)
        }
        guard parts.isEmpty || parts.contains("mhc") else { return }
        var weekStore: RecordedStore? = nil
        var lastRate = 0.0
        var importRate = 0.0
        var plainMeasure = ImportMeasure(rate: 0, seconds: 0, cpuSeconds: 0)
        // The longer run: a participant-week by name when it is one (with --days 1 it is one
        // day too, in files of its own).
        let weekLabel = weekDays == 7 ? "participant-week" : "\(weekDays)-day run"
        for (label, days) in [("participant-day", 1), (weekLabel, weekDays)] {
            let isWeek = label == weekLabel
            let csv = dir.appendingPathComponent("accelerometer-\(label).csv").path
            var t = now()
            let rows = try writeAccelerometerCSV(path: csv, start: start, seconds: days * 86_400)
            let size = RecordedStore.bytes(under: csv)
            output(String(format: "  %@: generated %d rows (%.0f MB of CSV) in %.2f s", label, rows, Double(size) / 1e6, secs(t)))
            output("  " + readIntoPageCache(csv))
            let path = dir.appendingPathComponent("store-\(label).sqlite").path
            let store = try RecordedStore(path: path)
            let request = ImportRequest(format: .mhcCSV, sources: [csv], participant: "bench", timeZone: "UTC", progressBar: false)
            for pass in ["import", "re-import"] {
                resetPeakResident()
                let base = residentBytes()
                defer { if isWeek { summary.append(("mhc-csv week \(pass)", lastRate)) } }
                t = now()
                let cpu0 = processCPUSeconds()
                let stats = try store.importData(request)
                let s = secs(t)
                let cpu = processCPUSeconds() - cpu0
                lastRate = Double(stats.rowsRead) / s
                if pass == "import" {
                    importRate = lastRate
                    plainMeasure = ImportMeasure(rate: lastRate, seconds: s, cpuSeconds: cpu)
                }
                let dbSize = RecordedStore.bytes(under: path) + RecordedStore.bytes(under: path + "-wal")
                output(String(format: "  %@: %@ %.2f s = %.2f M rows/s (target ≥ 7: %.2fx), %.0f MB/s of CSV; %.2f CPU-s (%.2f M rows per CPU-s); %d rows stored, %d duplicates dropped; store %.0f MB = %.1f B/row; peak memory %.0f MB (%.0f MB before)",
                              label, pass, s, Double(stats.rowsRead) / s / 1e6, Double(stats.rowsRead) / s / 7e6, Double(size) / 1e6 / s, cpu,
                              Double(stats.rowsRead) / cpu / 1e6, stats.rowsStored, stats.duplicatesDropped, Double(dbSize) / 1e6,
                              Double(dbSize) / Double(max(rows, 1)), Double(peakResidentBytes()) / 1e6, Double(base) / 1e6))
            }
            if !isWeek {
                // The same day gzip-compressed (.csv.gz) and as MyHeartCounts uploads it,
                // zstd-compressed (.csv.zstd), each into a store of its own: decompressing is
                // part of the import.
                let plainRate = importRate
                /// Imports the compressed file at `path` (`bytes` long, made by `how`) twice
                /// into a store of its own and prints its ratio to the plain import.
                func compressedPass(_ path: String, bytes: Int64, how: String, suffix: String, unit: String) throws {
                    output(String(format: "  %@ .csv.%@: %.0f MB compressed (%@) in %.2f s", label, suffix, Double(bytes) / 1e6, how, secs(t)))
                    output("  " + readIntoPageCache(path))
                    let compressedStore = try RecordedStore(path: dir.appendingPathComponent("store-\(label)-\(suffix).sqlite").path)
                    let rate = try importTwice(ImportRequest(format: .mhcCSV, sources: [path], participant: "bench", timeZone: "UTC", progressBar: false),
                                               into: compressedStore, label: "\(label) CSV.\(suffix)", key: "mhc-csv.\(suffix) day", inputBytes: bytes,
                                               unit: unit, summary: &summary, output: output).rate
                    output(compressedRatio("\(label) CSV.\(suffix)", rate: rate, plainRate: plainRate))
                    output(try decoderFloor("\(label) CSV.\(suffix)", root: path, decoder: suffix == "gz" ? "ISA-L inflate" : "libzstd",
                                            plain: plainMeasure, plainBytes: Int64(size)))
                    try compressedStore.close()
                    try FileManager.default.removeItem(atPath: path)
                }
                t = now()
                try compressedPass(csv + ".gz", bytes: try gzip(csv, to: csv + ".gz"), how: "gzip, ISA-L level 1", suffix: "gz", unit: "gzip")
                t = now()
                let zstdBytes = try ZstdCompressor.compressFile(csv, to: csv + ".zstd", workers: ProcessInfo.processInfo.activeProcessorCount)
                try compressedPass(csv + ".zstd", bytes: zstdBytes, how: "zstd level \(ZstdCompressor.defaultLevel)", suffix: "zstd", unit: "zstd")
            }
            try FileManager.default.removeItem(atPath: csv)
            if isWeek { weekStore = store } else { try store.close() }
        }
        // Scan and summarise the stored week vs the same summary over the simulator.
        resetPeakResident()
        if let store = weekStore {
            let rec = try store.source()
            let end = start + Double(weekDays) * 86_400
            let t = now()
            let stored = try summarise(rec, participant: "bench", device: device, start: start, end: end + 120, timeZone: zone)
            let s1 = secs(t)
            output(String(format: "  stored %@ (imported CSV): scan + hourly mean + daily 5/50/95th pct: %.2f s, %.1f M samples/s (%d samples, %d hours, %d days)",
                          weekLabel, s1, Double(stored.samples) / s1 / 1e6, stored.samples, stored.hours, stored.days))
        }
        let participant = ParticipantDescription(id: "bench", timeZone: "Europe/Paris", watch: .defaultWatch,
                                                 profile: ParticipantProfile(preset: .officeWorker))
        let sim = try SimulatedSource(seed: 1, participants: [participant])
        let phone = sim.devices(participant: "bench")[0]
        let paris = TimeZone(identifier: "Europe/Paris")!
        let end = start + Double(weekDays) * 86_400
        var t = now()
        let fromSim = try summarise(sim, participant: "bench", device: phone, start: start, end: end, timeZone: paris)
        let simSeconds = secs(t)
        output(String(format: "  simulator %@: same summary: %.2f s, %.1f M samples/s (%d samples)",
                      weekLabel, simSeconds, Double(fromSim.samples) / simSeconds / 1e6, fromSim.samples))
        let simStore = try RecordedStore(path: dir.appendingPathComponent("simulated-week.sqlite").path)
        t = now()
        let n = try simStore.copy(.accelerometer, from: sim, participant: "bench", device: phone, start: start, end: end, timeZone: "Europe/Paris")
        output(String(format: "  the simulator's %@ stored: %d rows in %.2f s", weekLabel, n, secs(t)))
        let rec = try simStore.source()
        t = now()
        let fromStore = try summarise(rec, participant: "bench", device: phone, start: start, end: end, timeZone: paris)
        let storeSeconds = secs(t)
        output(String(format: "  stored simulator %@: same summary: %.2f s, %.1f M samples/s; identical result: %@",
                      weekLabel, storeSeconds, Double(fromStore.samples) / storeSeconds / 1e6, fromStore == fromSim ? "yes" : "NO"))
        output(String(format: "  ratio stored / simulator: %.2f (target ≤ 2)", storeSeconds / simSeconds))
        output(String(format: "  peak resident memory of the summaries and the stored simulator week: %.0f MB", Double(peakResidentBytes()) / 1e6))
        try simStore.close()
        try weekStore?.close()
    }
}
