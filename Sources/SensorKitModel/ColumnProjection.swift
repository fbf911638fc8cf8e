/// Which of a sensor's columns (`SampleBatch.columns`, by field name) a reader of samples
/// needs: every column, or only some. Sample times and write times are not columns: every
/// batch holds them whatever the projection.
///
/// A pass over a sample set states its projection (`count()` needs no column, a mean of
/// `magnitude` needs `x`, `y` and `z`) and it travels with the read to the source
/// (`SampleSource.samplePiece(…columns:)`), which may then leave the other columns
/// undecoded. A source may always answer more columns than asked, never fewer of those the
/// sensor has; a batch read with a projection is served only to passes it covers.
public struct ColumnProjection: Sendable, Hashable, CustomStringConvertible {
    /// The columns named, in ascending order; nil: every column.
    public let names: [String]?

    /// Every column.
    public static let all = ColumnProjection(names: nil)
    /// No column: times and write times only (a count of rows).
    public static let none = ColumnProjection(names: [])

    private init(names: [String]?) { self.names = names }

    /// The columns in `names` (duplicates and order do not matter).
    public init(_ names: some Sequence<String>) { self.names = Array(Set(names)).sorted() }

    /// Whether every column is asked for.
    public var isAll: Bool { names == nil }

    /// Whether the column named `name` is asked for.
    public func contains(_ name: String) -> Bool { names.map { $0.contains(name) } ?? true }

    /// Whether a read with this projection holds every column `other` asks for.
    public func covers(_ other: ColumnProjection) -> Bool {
        guard let mine = names else { return true }
        guard let theirs = other.names else { return false }
        return theirs.allSatisfy { mine.contains($0) }
    }

    /// The columns either asks for.
    public func union(_ other: ColumnProjection) -> ColumnProjection {
        guard let a = names, let b = other.names else { return .all }
        return ColumnProjection(a + b)
    }

    /// `all`, or the names in braces: `{x, y, z}`.
    public var description: String { names.map { "{" + $0.joined(separator: ", ") + "}" } ?? "all" }
}
