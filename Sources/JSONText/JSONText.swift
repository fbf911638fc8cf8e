import Foundation

/// JSON text shared by every writer in the package (report tables, the native export
/// format, stored nested fields). A leaf module: it knows no sensors, no Lua and no
/// storage, so any module may use it without importing the others.
public enum JSONText {
    /// Appends `t` as a JSON string literal: quotes, backslashes and control characters
    /// escaped (`\n`, `\r`, `\t` by name, others as `\u00XX`); everything else as is (UTF-8).
    public static func string(_ t: String, into s: inout String) {
        // Most strings need no escape: append them whole.
        if !t.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            s += "\""
            s += t
            s += "\""
            return
        }
        s += "\""
        for u in t.unicodeScalars {
            switch u {
            case "\"": s += "\\\""
            case "\\": s += "\\\\"
            case "\n": s += "\\n"
            case "\r": s += "\\r"
            case "\t": s += "\\t"
            default:
                if u.value < 0x20 { s += String(format: "\\u%04x", u.value) } else { s.unicodeScalars.append(u) }
            }
        }
        s += "\""
    }

    /// `string(_:into:)` as a new string.
    public static func string(_ t: String) -> String {
        var out = ""
        string(t, into: &out)
        return out
    }
}
