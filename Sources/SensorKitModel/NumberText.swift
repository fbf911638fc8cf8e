/// Numbers as a user would write them in messages: whole numbers without `.0`
/// (`1772409600`), others as Swift prints them (`1e+300`, `0.5`), and NaN and the
/// infinities by name (`nan`, `inf`, `-inf`). Total: any Double has a text.
public enum NumberText {
    public static func plain(_ d: Double) -> String {
        if d.isNaN { return "nan" }
        if d.isInfinite { return d > 0 ? "inf" : "-inf" }
        if d.rounded() == d, abs(d) < 1e15 { return String(Int64(d)) }
        return "\(d)"
    }
}
