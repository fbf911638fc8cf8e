import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A progress bar on standard error, drawn only when standard error is a terminal.
///
/// Importers report bytes consumed; the bar shows the share of the input's total bytes
/// (compressed bytes for `.gz` files), the rows read and the current file.
public final class ImportProgress: @unchecked Sendable {
    public let totalBytes: Int64
    public private(set) var doneBytes: Int64 = 0
    public var rows = 0
    public var label = ""
    private var fileBase: Int64 = 0
    private var lastDraw: UInt64 = 0
    private let enabled: Bool
    private let started = DispatchTime.now().uptimeNanoseconds
    private var drawn = false

    /// `enabled` nil: only when stderr is a terminal.
    public init(totalBytes: Int64, enabled: Bool? = nil) {
        self.totalBytes = max(totalBytes, 1)
        self.enabled = enabled ?? (isatty(2) != 0)
    }

    /// A new file starts; its bytes follow the previous files'.
    package func beginFile(_ name: String) {
        fileBase = doneBytes
        label = name
        tick()
    }

    /// `bytes` of the current file consumed so far.
    package func fileProgress(_ bytes: Int64) {
        doneBytes = fileBase + bytes
        tick()
    }

    package func tick() {
        guard enabled else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        if now - lastDraw < 100_000_000 { return }
        lastDraw = now
        draw()
    }

    private func draw() {
        let frac = min(1, Double(doneBytes) / Double(totalBytes))
        let width = 30
        let filled = Int(frac * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let secs = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        var name = label
        if name.count > 40 { name = "…" + name.suffix(39) }
        let line = String(format: "\r%@ %5.1f%%  %.1f M rows  %.0f s  %@\u{1B}[K", bar, frac * 100, Double(rows) / 1e6, secs, name)
        FileHandle.standardError.write(line.data(using: .utf8)!)
        drawn = true
    }

    /// Clears the bar.
    public func finish() {
        guard enabled, drawn else { return }
        FileHandle.standardError.write("\r\u{1B}[K".data(using: .utf8)!)
        drawn = false
    }
}
