/// An OS version such as 17.4, used for "first OS" of sensors and fields (contract §3.1, §3.3).
public struct OSVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var major: Int
    public var minor: Int

    public init(_ major: Int, _ minor: Int = 0) {
        self.major = major
        self.minor = minor
    }

    /// Parses `"17"`, `"17.4"` or `"17.4.1"` (the patch part is ignored).
    public init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), let major = Int(parts[0]) else { return nil }
        let minor = parts.count > 1 ? Int(parts[1]) : 0
        guard let minor, parts.count < 3 || Int(parts[2]) != nil else { return nil }
        self.init(major, minor)
    }

    public static func < (a: OSVersion, b: OSVersion) -> Bool { (a.major, a.minor) < (b.major, b.minor) }
    public var description: String { "\(major).\(minor)" }
}

/// What `SRFetchResult.sample` holds (contract §3.1 "Shape"): one object, or an array of
/// elements written together (flattened to one row per element, sharing the
/// result's write time).
public enum ResultShape: String, Sendable, Hashable {
    case object
    case array
}

/// One named raw value of an enumeration, or one bit of an option set.
public struct NamedValue: Sendable, Hashable, CustomStringConvertible {
    public var name: String
    public var rawValue: Int64

    public init(_ name: String, _ rawValue: Int64) {
        self.name = name
        self.rawValue = rawValue
    }

    public var description: String { "\(name)=\(rawValue)" }
}

/// How a field's values are stored in a `SampleBatch` column (`ColumnData` case).
public enum ColumnKind: String, Sendable, Hashable {
    case double, int, bool, string, value
}

/// The type of a sample field as a protocol sees it (contract §3.3).
public enum FieldType: Sendable, Hashable {
    /// A number (`Double`, or a `Measurement` in the field's unit).
    case double
    /// An integer count or identifier.
    case int
    case bool
    case string
    /// A wall-clock `Date`, stored as seconds since the Unix epoch.
    case date
    /// A `TimeInterval` in seconds.
    case duration
    /// An `SRAbsoluteTime` (SR clock seconds, contract §4) — deletion records only.
    case absoluteTime
    /// An integer enumeration with named raw values (`name` is Apple's type name).
    case enumeration(name: String, cases: [NamedValue])
    /// An integer option set with named bits.
    case optionSet(name: String, bits: [NamedValue])
    /// A nested value (`ColumnData.value`): its sub-fields with their types and units.
    case structured(Structure)

    /// The `ColumnData` case a backend uses for this field.
    public var columnKind: ColumnKind {
        switch self {
        case .double, .date, .duration, .absoluteTime: .double
        case .int, .enumeration, .optionSet: .int
        case .bool: .bool
        case .string: .string
        case .structured: .value
        }
    }

    /// `"double"`, `"int"`, `"bool"`, `"string"`, `"date"`, `"duration"`, `"absoluteTime"`,
    /// `"enumeration"`, `"optionSet"` or `"structured"`.
    public var kindName: String {
        switch self {
        case .double: "double"
        case .int: "int"
        case .bool: "bool"
        case .string: "string"
        case .date: "date"
        case .duration: "duration"
        case .absoluteTime: "absoluteTime"
        case .enumeration: "enumeration"
        case .optionSet: "optionSet"
        case .structured: "structured"
        }
    }

    /// The named values of an enumeration or the bits of an option set (empty otherwise).
    public var namedValues: [NamedValue] {
        switch self {
        case .enumeration(_, let v), .optionSet(_, let v): v
        default: []
        }
    }

    /// Whether `raw` is a value of this type: one of an enumeration's cases, a set of an
    /// option set's bits; any integer for other types. Importers refuse the rest.
    public func accepts(raw: Int64) -> Bool {
        switch self {
        case .enumeration(_, let cases): return cases.contains { $0.rawValue == raw }
        case .optionSet(_, let bits): return raw >= 0 && raw & ~bits.reduce(Int64(0)) { $0 | $1.rawValue } == 0
        default: return true
        }
    }

    /// The allowed raw values, for messages: "unknown (0), frontTop (1), …" or "bits within 15".
    public var allowedRaw: String {
        switch self {
        case .optionSet(_, let bits): return "option bits within \(bits.reduce(Int64(0)) { $0 | $1.rawValue })"
        default: return namedValues.map { "\($0.name) (\($0.rawValue))" }.joined(separator: ", ")
        }
    }

    /// The name of an enumeration raw value (`.enumeration` only).
    public func caseName(for raw: Int64) -> String? { namedValues.first { $0.rawValue == raw }?.name }

    /// The raw value of an enumeration case or option bit named `name`.
    public func rawValue(forName name: String) -> Int64? { namedValues.first { $0.name == name }?.rawValue }

    /// The raw value of a case or bit as producers spell it: Apple's name in any case and
    /// with or without separators (`frontTopRight`, `FrontTopRight` as MyDataHelps writes it,
    /// `FRONT_TOP_RIGHT` as RADAR-base does), or `unknown<N>` / `unknown(N)` (SpeziSensorKit's
    /// text for a raw value it has no name for) when N is a value of this type. Nil otherwise
    /// (`producerUnknownRaw` reads an `unknown<N>` whose N the catalogue has no name for).
    public func rawValue(forProducerName name: String) -> Int64? {
        if let raw = rawValue(forName: name) { return raw }
        let key = FieldType.nameKey(name)
        if let v = namedValues.first(where: { FieldType.nameKey($0.name) == key }) { return v.rawValue }
        if let raw = FieldType.producerUnknownRaw(name), accepts(raw: raw) { return raw }
        return nil
    }

    /// The N of `unknown<N>` / `unknown(N)`: SpeziSensorKit's text for a raw value it has no
    /// name for (`@unknown default: "unknown<\(rawValue)>"`, AmbientLight.swift L68–91), so N
    /// may be a case newer than the catalogue's. N is decimal digits only, 0 … Int64.max;
    /// nil for any other text (a sign, a fraction, no digits, other words).
    public static func producerUnknownRaw(_ text: String) -> Int64? {
        for (open, close) in [("unknown<", ">"), ("unknown(", ")")] where text.lowercased().hasPrefix(open) && text.hasSuffix(close) {
            let digits = text.utf8.dropFirst(open.utf8.count).dropLast(close.utf8.count)
            guard !digits.isEmpty, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
            return Int64(String(decoding: digits, as: UTF8.self))
        }
        return nil
    }

    /// A case name without case or separators, for `rawValue(forProducerName:)`.
    private static func nameKey(_ s: String) -> String { String(s.lowercased().filter { $0.isLetter || $0.isNumber }) }

    /// The names of the bits set in `raw` (`.optionSet` only), in declaration order.
    public func optionNames(in raw: Int64) -> [String] {
        guard case .optionSet(_, let bits) = self else { return [] }
        return bits.filter { $0.rawValue != 0 && raw & $0.rawValue == $0.rawValue }.map(\.name)
    }
}

/// The nested form of a structured field (contract §3.3): tables of named sub-fields,
/// lists, tables keyed by names, and scalars with their type and unit. One description
/// serves `sensorkit.info` (sub-field tables), the field's `shape` text and the check that
/// a value has this form (`problem(in:)`).
public indirect enum Structure: Sendable, Hashable {
    /// A table of named sub-fields, in order.
    case record([SubField])
    /// A list whose elements all have one form.
    case list(Structure)
    /// A table from names to values of one form: `key` says what the names are
    /// (`"category"`), `keys` lists the names allowed when they are a fixed set.
    case keyed(key: String, keys: [String]?, Structure)
    /// A number, string or flag: a scalar `FieldType` and its unit.
    case scalar(FieldType, unit: String?)

    /// The shape as text: `{a, b s, c?: [{d, e mm}]}`, `[double mm]`, `{category: [...]}`.
    public var text: String {
        switch self {
        case .record(let fields): "{" + fields.map(\.text).joined(separator: ", ") + "}"
        case .list(let element): "[" + element.text + "]"
        case .keyed(let key, _, let element): "{" + key + ": " + element.text + "}"
        case .scalar(let type, let unit): type.kindName + (unit.map { " " + $0 } ?? "")
        }
    }

    /// The sub-fields of the first table of named sub-fields reached through lists and
    /// keyed tables (what one entry holds), or nil when there is none (a list of numbers).
    public var entryFields: [SubField]? {
        switch self {
        case .record(let fields): fields
        case .list(let element), .keyed(_, _, let element): element.entryFields
        case .scalar: nil
        }
    }

    /// Why `value` does not have this form (`"[3].usageTime: expected a number"`), or nil
    /// when it has: records hold only their sub-fields (missing or null only when
    /// optional), lists and keyed tables hold elements of their form (keyed names from
    /// `keys` when given), scalars their type (dates and durations are numbers,
    /// enumerations one of their cases, option sets their bits).
    public func problem(in value: FieldValue) -> String? {
        func at(_ path: String, _ p: String?) -> String? { p.map { path + ($0.hasPrefix("[") || $0.hasPrefix(".") ? "" : ": ") + $0 } }
        switch (self, value) {
        case (.record(let fields), .object(let entries)):
            for (name, v) in entries {
                guard let f = fields.first(where: { $0.name == name }) else { return ".\(name): not a sub-field" }
                if case .null = v, f.isOptional { continue }
                if let p = f.form.problem(in: v) { return at("." + name, p) }
            }
            for f in fields where !f.isOptional && !entries.contains(where: { $0.0 == f.name }) { return ".\(f.name): missing" }
            return nil
        case (.list(let element), .array(let items)):
            for (i, item) in items.enumerated() { if let p = element.problem(in: item) { return at("[\(i + 1)]", p) } }
            return nil
        case (.keyed(_, let keys, let element), .object(let entries)):
            for (name, v) in entries {
                if let keys, !keys.contains(name) { return ".\(name): not one of the names allowed" }
                if let p = element.problem(in: v) { return at("." + name, p) }
            }
            return nil
        case (.scalar(let type, _), _):
            return Self.scalarProblem(type, value)
        case (.record, _), (.keyed, _): return "expected a table"
        case (.list, _): return "expected a list"
        }
    }

    private static func scalarProblem(_ type: FieldType, _ value: FieldValue) -> String? {
        switch (type, value) {
        case (.double, .double), (.double, .int), (.date, .double), (.date, .int), (.duration, .double), (.duration, .int),
             (.absoluteTime, .double), (.int, .int), (.bool, .bool), (.string, .string):
            return nil
        case (.enumeration, .int(let raw)), (.optionSet, .int(let raw)):
            return type.accepts(raw: raw) ? nil : "\(raw) is not one of \(type.allowedRaw)"
        case (.bool, _): return "expected true or false"
        case (.string, _): return "expected a string"
        case (.int, _), (.enumeration, _), (.optionSet, _): return "expected an integer"
        case (.structured(let inner), _): return inner.problem(in: value)
        default: return "expected a number"
        }
    }
}

/// One named part of a structured field's value.
public struct SubField: Sendable, Hashable {
    public var name: String
    public var form: Structure
    public var isOptional: Bool

    public init(_ name: String, _ form: Structure, optional: Bool = false) {
        self.name = name
        self.form = form
        self.isOptional = optional
    }

    /// `name`, `name?` when optional, then ` unit` for a scalar with one or `: form`.
    public var text: String {
        let head = name + (isOptional ? "?" : "")
        switch form {
        case .scalar(_, let unit): return head + (unit.map { " " + $0 } ?? "")
        default: return head + ": " + form.text
        }
    }
}

/// Where a field lives in a `SampleBatch`.
public enum FieldRole: String, Sendable, Hashable {
    /// A column named like the field.
    case column
    /// The batch's `times` array (the sample's own date); no separate column.
    case rowTime
}

/// One field of a sensor's samples as a protocol sees it (contract §3.3).
public struct FieldSchema: Sendable, Hashable {
    /// Column name as protocols use it (`"lux"`, `"chromaticityX"`, `"x"`).
    public var name: String
    public var type: FieldType
    /// Unit of the stored number (`"lx"`, `"g"`, `"rad/s"`, `"s"`, `"°C"`…), nil when unitless.
    public var unit: String?
    /// True when the SensorKit property is optional (missing values are masked in the column).
    public var isOptional: Bool
    /// One line: what the field means.
    public var summary: String
    /// Apple's property path (`"acceleration.x"`, `"arrivalDateInterval.start"`).
    public var appleName: String
    /// First OS version with this property when later than the sensor's own.
    public var since: OSVersion?
    public var role: FieldRole

    public init(name: String, type: FieldType, unit: String? = nil, isOptional: Bool = false, summary: String,
                appleName: String? = nil, since: OSVersion? = nil, role: FieldRole = .column) {
        self.name = name
        self.type = type
        self.unit = unit
        self.isOptional = isOptional
        self.summary = summary
        self.appleName = appleName ?? name
        self.since = since
        self.role = role
    }
}

/// How often a sensor produces samples (contract §3.2). Apple documents almost none of this.
public struct Cadence: Sendable, Hashable {
    /// Human text, e.g. "~50 Hz continuous, written in 60-s batches".
    public var summary: String
    /// Nominal seconds between rows while the sensor produces data; nil for event-driven streams.
    public var nominalPeriod: Double?
    /// True only where Apple confirms the rate (heart rate 1 Hz).
    public var confirmed: Bool

    public init(_ summary: String, period: Double?, confirmed: Bool = false) {
        self.summary = summary
        self.nominalPeriod = period
        self.confirmed = confirmed
    }
}

/// The stretch of time a sample covers, where SensorKit gives one (contract §3.3, §4.3):
/// what protocols read as `windowStart` and `windowEnd`.
public enum SampleWindow: Sendable, Hashable, CustomStringConvertible {
    /// From the sample's own date to a date field (pedometer and odometer bins: `endDate`;
    /// visits: arrival to `departureEnd`).
    case toField(String)
    /// From the sample's own date for a duration field (sleep and wrist-temperature sessions).
    case forDuration(String)
    /// A duration field ending at the write time: reports with no date of their own
    /// (device, messages and phone usage, keyboard metrics). SensorKit gives their window
    /// only as `duration` and writes a report after its window closes (contract §4.3, T22),
    /// so this is the latest the window can lie.
    case durationBeforeWrite(String)

    /// `"startDate to endDate"`, `"startDate for duration"`, `"duration up to the write time"`
    /// (`rowTime` names the sample's own date field).
    public func text(rowTime: String?) -> String {
        switch self {
        case .toField(let end): "\(rowTime ?? "time") to \(end)"
        case .forDuration(let d): "\(rowTime ?? "time") for \(d)"
        case .durationBeforeWrite(let d): "\(d) up to the write time"
        }
    }

    public var description: String { text(rowTime: nil) }
}

/// Everything the contract says about one sensor (contract §2.1, §2.2, §3.1–§3.3).
public struct SensorInfo: Sendable, Hashable {
    public var sensor: Sensor
    /// The public string for `com.apple.developer.sensorkit.reader.allow` (contract §2.1).
    public var entitlement: String
    /// False where the string is inferred rather than documented (contract §2.1 "Status").
    public var entitlementConfirmed: Bool
    /// The `NSSensorKitUsageDetail` key (`SRSensorUsage…`, contract §2.2).
    public var usageKey: String
    public var usageKeyConfirmed: Bool
    /// ObjC constant (`SRSensorAmbientLightSensor`).
    public var objcConstant: String
    /// Apple's sample class (`SRAmbientLightSample`).
    public var sampleType: String
    /// Devices that produce the data (contract §3.1 "Src"): phone and/or paired watch.
    public var deviceKinds: [DeviceKind]
    public var shape: ResultShape
    /// First iOS SDK exposing the sensor (contract §3.1 "OS").
    public var firstOS: OSVersion
    public var cadence: Cadence
    /// Every sample field, the row-time field (if any) first, then columns in order.
    public var fields: [FieldSchema]
    /// The stretch of time each sample covers, for sensors whose samples span one.
    public var window: SampleWindow? = nil

    /// The field stored in `SampleBatch.times`, or nil when the sample has no own
    /// date — then `times` holds the write time.
    public var rowTimeField: FieldSchema? { fields.first { $0.role == .rowTime } }
    /// The fields stored as columns, in `SampleBatch.columns` order.
    public var columnFields: [FieldSchema] { fields.filter { $0.role == .column } }
    public func field(_ name: String) -> FieldSchema? { fields.first { $0.name == name } }
}
