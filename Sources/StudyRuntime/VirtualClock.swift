import Foundation
@_spi(Bindings) import LuaHost
import SensorKitModel

/// The virtual wall clock of one participant's run. The event loop moves it;
/// scripts read it through `time.now()`, `os.time()` and `os.date()`.
public final class VirtualClock: HostClock {
    public private(set) var now: Double
    public let start: Double
    public var timeZone: TimeZone
    public var elapsed: Double { now - start }

    public init(start: Double, timeZone: TimeZone) {
        self.now = start
        self.start = start
        self.timeZone = timeZone
    }

    /// Moves the clock to `t` (never backwards).
    public func advance(to t: Double) { if t > now { now = t } }
}

/// What the participant's phone shows: the run's virtual clock plus the offset of the
/// scenario's wall-clock jumps (`clockJump`). Scripts read it through `os.time()`,
/// `os.date()` and `time.now()`, so after a jump of +1 h they see the phone's clock an
/// hour ahead, as `SRAbsoluteTime.toCFAbsoluteTime()` does; the event loop (schedules,
/// delegate deliveries) keeps running on the virtual clock, which never jumps.
public final class DeviceWallClock: HostClock {
    public let clock: VirtualClock
    /// Seconds the phone's clock is ahead of the virtual clock.
    public var offset: Double = 0

    public init(_ clock: VirtualClock) { self.clock = clock }

    public var now: Double { clock.now + offset }
    public var elapsed: Double { clock.elapsed }
    public var timeZone: TimeZone { clock.timeZone }
}
