/// A set of switches a scenario sets by name (`WorldSwitches`; the simulator's
/// `SimulationSettings`). Each switch is one `SwitchEntry` of `switchTable` — its name,
/// documentation, parser and key path — from which setting by name, the checks, the
/// documentation (`knobs`, `sensorium switches`, docs/lua-api.md) are all made. A
/// switch's default is its stored property's initial value: `Self()` shows it.
public protocol SwitchSet: Sendable {
    init()
    /// Every switch of the set, in documentation order.
    static var switchTable: [SwitchEntry<Self>] { get }
}

extension SwitchSet {
    /// The entry that `name` (`"knob"` or `"knob.sensorName"`) sets, or nil.
    public static func entry(named name: String) -> SwitchEntry<Self>? {
        let knob = SwitchEntry<Self>.knob(of: name)
        return switchTable.first { $0.name == knob }
    }

    /// Whether `name` (`"knob"` or `"knob.sensorName"`) is one of this set's switches.
    public static func isSwitch(_ name: String) -> Bool { entry(named: name) != nil }

    /// Each switch's documentation, its default shown from a fresh set.
    public static var knobs: [KnobDescription] {
        let fresh = Self()
        return switchTable.map {
            KnobDescription(name: $0.name, allowed: $0.allowed, defaultValue: $0.show(fresh), section: $0.section, summary: $0.summary)
        }
    }

    /// Sets the switch `name` (`"knob.sensorName"` for one sensor of a per-sensor switch)
    /// from a scenario value. Throws a `SwitchError` naming the switch and what it accepts;
    /// for an unknown name, suggestions come from this set and `otherKnobs` (another set's
    /// switches, which the same scenario table holds). On error the set is unchanged.
    public mutating func set(name: String, value: SwitchValue, otherKnobs: [String] = []) throws {
        let knob = SwitchEntry<Self>.knob(of: name)
        guard let entry = Self.entry(named: name) else {
            throw SwitchError(knob: name, message: "no such switch", allowed: "",
                              suggestions: Suggestions.closest(to: knob, among: Self.switchTable.map(\.name) + otherKnobs))
        }
        if knob != name && !entry.perSensor { throw SwitchError(knob: name, message: "is not a per-sensor switch", allowed: entry.allowed) }
        try entry.store(&self, name, value)
    }

    /// Sets several switches, in key order, stopping at the first error.
    public mutating func set(_ values: [String: SwitchValue]) throws {
        for key in values.keys.sorted() { try set(name: key, value: values[key]!) }
    }
}

/// One switch of a `SwitchSet`, written once: its name, what it accepts, why it exists,
/// how a scenario value is read and where it is stored. Made by the constructors below,
/// one per kind of value (a choice, a flag, seconds, seconds per sensor, an error code).
public struct SwitchEntry<Root: Sendable>: Sendable {
    public let name: String
    /// What the switch accepts, e.g. `"\"clamp\" or \"strictDoc\""`.
    public let allowed: String
    /// The reference section that motivates it.
    public let section: String
    /// What it does, with its other values: one sentence for the documentation.
    public let summary: String
    /// Whether `"name.sensorName"` sets one sensor's value.
    public let perSensor: Bool
    /// Reads `value` given under `name` (`"knob"` or `"knob.sensorName"`) into the set.
    let store: @Sendable (inout Root, _ name: String, _ value: SwitchValue) throws -> Void
    /// The switch's value in a set, as the documentation writes it.
    let show: @Sendable (Root) -> String

    /// `"holdingPeriod"` of `"holdingPeriod.faceMetrics"`.
    static func knob(of name: String) -> String {
        name.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? name
    }

    /// A switch of any value: `parse` reads a scenario value (throwing `SwitchError` through
    /// the `fail` it is given), `text` shows one.
    public static func value<V>(_ name: String, _ path: WritableKeyPath<Root, V> & Sendable, allowed: String, section: String,
                                summary: String, parse: @escaping @Sendable (SwitchValue, (String) -> SwitchError) throws -> V,
                                text: @escaping @Sendable (V) -> String) -> SwitchEntry {
        SwitchEntry(name: name, allowed: allowed, section: section, summary: summary, perSensor: false,
                    store: { root, given, value in
                        root[keyPath: path] = try parse(value) { SwitchError(knob: given, message: $0, allowed: allowed) }
                    },
                    show: { text($0[keyPath: path]) })
    }

    /// One of an enumeration's cases, by raw value (case-insensitively); `"a" or "b"` accepted.
    public static func choice<E: RawRepresentable & CaseIterable & Sendable>(
        _ name: String, _ path: WritableKeyPath<Root, E> & Sendable, section: String, summary: String
    ) -> SwitchEntry where E.RawValue == String {
        let allowed = SwitchEntry.alternatives(E.allCases.map { "\"\($0.rawValue)\"" })
        return value(name, path, allowed: allowed, section: section, summary: summary, parse: { value, fail in
            guard case .string(let s) = value else { throw fail("cannot use \(value)") }
            if let e = E(rawValue: s) ?? E.allCases.first(where: { $0.rawValue.lowercased() == s.lowercased() }) { return e }
            throw SwitchError(knob: name, message: "unknown value \"\(s)\"", allowed: allowed,
                              suggestions: Suggestions.closest(to: s, among: E.allCases.map(\.rawValue)))
        }, text: { "`\"\($0.rawValue)\"`" })
    }

    /// true or false (also as the strings `"true"` and `"false"`).
    public static func flag(_ name: String, _ path: WritableKeyPath<Root, Bool> & Sendable, section: String, summary: String) -> SwitchEntry {
        value(name, path, allowed: "true or false", section: section, summary: summary, parse: { value, fail in
            switch value {
            case .bool(let b): return b
            case .string(let s) where ["true", "false"].contains(s.lowercased()): return s.lowercased() == "true"
            default: throw fail("cannot use \(value)")
            }
        }, text: { String($0) })
    }

    /// Seconds in `range`, as a number or a duration (`"90m"`); with `orZero`, also 0
    /// below the range (a switch where 0 means none).
    public static func seconds(_ name: String, _ path: WritableKeyPath<Root, Double> & Sendable,
                               range: ClosedRange<Double> = 0...WorldSwitches.longestDuration, orZero: Bool = false,
                               allowed: String = "seconds", section: String, summary: String) -> SwitchEntry {
        value(name, path, allowed: allowed, section: section, summary: summary, parse: { value, fail in
            if orZero, WorldSwitches.seconds(value) == 0 { return 0 }
            guard let d = WorldSwitches.seconds(value), range.contains(d) else {
                throw fail("cannot use \(value) (from \(WorldSwitches.durationText(range.lowerBound)) to \(WorldSwitches.durationText(range.upperBound)))")
            }
            return d
        }, text: { WorldSwitches.durationText($0) })
    }

    /// Seconds in `range` per sensor (`WorldSwitches.setPerSensorSeconds`). Shown as the most
    /// common value with the sensors that differ; an empty map shows `fallback`'s value
    /// (the setting the map overrides).
    public static func secondsPerSensor(_ name: String, _ path: WritableKeyPath<Root, [Sensor: Double]> & Sendable,
                                        range: ClosedRange<Double> = 0...WorldSwitches.longestDuration,
                                        fallback: (KeyPath<Root, Double> & Sendable)? = nil,
                                        section: String, summary: String) -> SwitchEntry {
        let allowed = "seconds, per sensor"
        return SwitchEntry(name: name, allowed: allowed, section: section, summary: summary, perSensor: true,
                           store: { root, given, value in
                               try WorldSwitches.setPerSensorSeconds(&root[keyPath: path], name: given, value: value, allowed: allowed, range: range)
                           },
                           show: { root in
                               let map = root[keyPath: path]
                               if map.isEmpty, let fallback { return WorldSwitches.durationText(root[keyPath: fallback]) }
                               return WorldSwitches.perSensorText(map)
                           })
    }

    /// An error code, by number or by name (`"dataInaccessible"`).
    public static func errorCode(_ name: String, _ path: WritableKeyPath<Root, SRErrorCode> & Sendable,
                                 section: String, summary: String) -> SwitchEntry {
        let allowed = "an error code or name"
        return value(name, path, allowed: allowed, section: section, summary: summary, parse: { value, fail in
            switch value {
            case .number(let d) where d == d.rounded() && abs(d) < 1e9: return SRErrorCode(Int(d))
            case .string(let s):
                if let c = SRErrorCode(name: s) { return c }
                throw SwitchError(knob: name, message: "unknown error code \"\(s)\"", allowed: allowed,
                                  suggestions: Suggestions.closest(to: s, among: SRErrorCode.known.compactMap(\.name)))
            default: throw fail("cannot use \(value)")
            }
        }, text: { code in code.name.map { "\(code.rawValue), \($0)" } ?? "\(code.rawValue)" })
    }

    /// `"a"`, `"a or b"`, `"a, b or c"`.
    static func alternatives(_ items: [String]) -> String {
        items.count < 2 ? items.joined() : items.dropLast().joined(separator: ", ") + " or " + items.last!
    }
}
