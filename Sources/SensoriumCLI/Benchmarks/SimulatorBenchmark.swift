import Foundation
import SensorKitModel
#if canImport(Glibc)
import Glibc
import Simulator
#endif

/// Generation speed of the simulator: one participant-week of every implemented stream,
/// fetched in chunks of at most an hour of write time (`sensorium bench simulate`).
public enum SimulatorBenchmark {
    public struct StreamResult: Sendable, Hashable {
        public var sensor: Sensor
        public var device: DeviceKind
        public var samples: Int
        /// Wall-clock seconds.
        public var seconds: Double
        /// CPU seconds of the calling thread (stable on a shared machine).
        public var cpuSeconds: Double
        /// Samples per wall-clock second.
        public var samplesPerSecond: Double { seconds > 0 ? Double(samples) / seconds : 0 }
        /// Samples per CPU second.
        public var samplesPerCPUSecond: Double { cpuSeconds > 0 ? Double(samples) / cpuSeconds : 0 }
    }

    /// Runs the benchmark on the calling thread and returns one result per (sensor, device).
    ///
    /// On glibc it first raises malloc's mmap and trim thresholds, as a streaming consumer
    /// should: otherwise every hour-sized chunk is returned to the kernel when freed and
    /// page-faulted back in by the next one, which costs more than generating it.
    /// - Parameters:
    ///   - days: simulated days (7 = one participant-week).
    ///   - chunkSeconds: write-time span of each `samples` call (≤ 3 600).
    ///   - start: first instant (Unix s); default 2026-03-02 00:00 UTC, a Monday.
    public static func run(seed: UInt64 = 1, days: Int = 7, chunkSeconds: Double = 3_600,
                           start: Double = 1_772_409_600,
                           sensors: [Sensor] = SimulatedSource.implementedSensors) -> [StreamResult] {
        var profile = ParticipantProfile(preset: .officeWorker)
        profile.wearsWatchToSleep = true   // so that the night-time watch streams have data
        let participant = ParticipantDescription(id: "bench", timeZone: "Europe/Paris", watch: .defaultWatch, profile: profile)
        guard let source = try? SimulatedSource(seed: seed, participants: [participant]) else { return [] }
        tuneAllocator()
        let chunk = min(max(1, chunkSeconds), 3_600)
        let end = start + Double(days) * 86_400
        var results: [StreamResult] = []
        for sensor in sensors {
            for device in source.devices(participant: participant.id)
            where SimulatedSource.produces(sensor, on: device.kind) {
                var samples = 0
                var checksum = 0.0
                let clock = ContinuousClock()
                let began = clock.now
                let cpuBegan = threadCPUTime()
                var t = start
                while t < end {
                    let b = source.samples(participant: participant.id, sensor: sensor, device: device,
                                           writtenAfter: t, through: min(end, t + chunk))
                    samples += b.count
                    checksum += b.writeTimes.last ?? 0
                    t += chunk
                }
                let elapsed = clock.now - began
                let cpu = threadCPUTime() - cpuBegan
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
                if checksum.isNaN { print("") }
                results.append(StreamResult(sensor: sensor, device: device.kind, samples: samples, seconds: seconds, cpuSeconds: cpu))
            }
        }
        return results
    }

    /// The results as a text table.
    public static func report(_ results: [StreamResult]) -> String {
        var lines = ["stream                  device     samples   wall s    cpu s    samples/s  samples/cpu-s"]
        for r in results {
            let name = r.sensor.rawValue.padding(toLength: 22, withPad: " ", startingAt: 0)
            let dev = r.device.rawValue.padding(toLength: 6, withPad: " ", startingAt: 0)
            lines.append("\(name)  \(dev) \(pad(String(r.samples), 11)) \(pad(String(format: "%.3f", r.seconds), 8)) \(pad(String(format: "%.3f", r.cpuSeconds), 8)) \(pad(String(format: "%.3g", r.samplesPerSecond), 12)) \(pad(String(format: "%.3g", r.samplesPerCPUSecond), 14))")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func pad(_ s: String, _ n: Int) -> String {
        s.count >= n ? s : String(repeating: " ", count: n - s.count) + s
    }

    /// CPU seconds used by the calling thread so far.
    public static func threadCPUTime() -> Double {
        #if canImport(Glibc)
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
        #else
        return 0
        #endif
    }

    /// Raises glibc malloc's mmap and trim thresholds so chunk-sized buffers are reused
    /// instead of being returned to the kernel and faulted back in (no-op elsewhere).
    public static func tuneAllocator() {
        #if canImport(Glibc)
        // mallopt is not in Swift's Glibc module: look it up. M_TRIM_THRESHOLD = -1,
        // M_MMAP_THRESHOLD = -3 (malloc.h).
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let handle = dlopen(nil, RTLD_NOW), let sym = dlsym(handle, "mallopt") else { return }
        let mallopt = unsafeBitCast(sym, to: Mallopt.self)
        _ = mallopt(-3, 32 << 20)
        _ = mallopt(-1, 1 << 30)
        #endif
    }
}
