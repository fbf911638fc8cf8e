/// XML and HTML text shared by every writer of markup (SVG charts, the HTML run report,
/// JUnit XML). Like `JSONText`, a leaf: it knows nothing of what it escapes.
public enum MarkupText {
    /// `s` as XML 1.0 / HTML character data, safe in element content and in double-quoted
    /// attribute values: `&`, `<`, `>` and `"` become entities; tab, line feed and carriage
    /// return stay; every other character XML 1.0 cannot hold (controls below U+0020,
    /// U+FFFE, U+FFFF) is dropped, so the document stays well-formed whatever `s` holds.
    public static func escape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for u in s.unicodeScalars where isCharacter(u) {
            if let entity = entities[u] { out += entity } else { out.unicodeScalars.append(u) }
        }
        return out
    }

    /// The markup characters and their entities.
    static let entities: [Unicode.Scalar: String] = ["&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;"]

    /// Whether XML 1.0 can hold `u` (its `Char` production; Swift strings hold no surrogates).
    static func isCharacter(_ u: Unicode.Scalar) -> Bool {
        u.value >= 0x20 ? u.value != 0xFFFE && u.value != 0xFFFF : u == "\t" || u == "\n" || u == "\r"
    }
}
