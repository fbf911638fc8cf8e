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
        for u in s.unicodeScalars {
            switch u {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "\t", "\n", "\r": out.unicodeScalars.append(u)
            default: if u.value >= 0x20 && u.value != 0xFFFE && u.value != 0xFFFF { out.unicodeScalars.append(u) }
            }
        }
        return out
    }
}
