/// An error out of Lua, as a Swift value.
///
/// `message` is what the script raised, with its `chunk:line:` prefix when Lua
/// gave one; `chunk` and `line` are parsed from that prefix (or from the first
/// traceback frame in a script). `traceback` is the stack at the point of the
/// error, when one could be taken. `value` keeps a non-string error object.
public struct LuaError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case syntax
        case runtime
        case memory
        case errorHandler
        /// A limit stopped the script: see `stop`.
        case stopped
    }

    /// Which limit stopped a script.
    public enum Stop: String, Sendable {
        case instructionBudget = "instruction budget"
        case timeLimit = "time limit"
        case memoryLimit = "memory limit"
        case interrupted
    }

    public var kind: Kind
    public var message: String
    public var chunk: String?
    public var line: Int?
    public var traceback: String?
    public var stop: Stop?
    public var value: LuaValue?
    /// The Swift error itself when the error value was one a host function raised as a
    /// `LuaUncatchableError` (or a Swift error Swift code wrapped here): its identity,
    /// for the embedder to act on by type rather than by message.
    public var hostError: (any Error)?

    public init(kind: Kind, message: String, chunk: String? = nil, line: Int? = nil,
                traceback: String? = nil, stop: Stop? = nil, value: LuaValue? = nil, hostError: (any Error)? = nil) {
        self.hostError = hostError
        self.kind = kind
        self.message = message
        self.chunk = chunk
        self.line = line
        self.traceback = traceback
        self.stop = stop
        self.value = value
        if chunk == nil, let (c, l) = LuaError.location(in: message) {
            self.chunk = c
            self.line = l
        }
        if self.chunk == nil, let tb = traceback, let (c, l) = LuaError.firstScriptFrame(in: tb) {
            self.chunk = c
            self.line = l
        }
    }

    public var description: String { message }

    /// Equal when everything Lua said is equal and the host errors, if any, print alike.
    public static func == (a: LuaError, b: LuaError) -> Bool {
        a.kind == b.kind && a.message == b.message && a.chunk == b.chunk && a.line == b.line && a.traceback == b.traceback
            && a.stop == b.stop && a.value == b.value && a.hostError.map { "\($0)" } == b.hostError.map { "\($0)" }
    }

    /// The message and a short traceback (at most `frames` script frames), for a terminal.
    public func report(frames: Int = 6) -> String {
        guard let traceback, !traceback.isEmpty else { return message }
        let lines = traceback.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        var kept: [String] = []
        for line in lines.dropFirst() {
            let t = line.trimmingCharacters(in: .whitespaces)
            if t.hasPrefix("[C]: in ?") || t.hasPrefix("sandbox:") || t.hasPrefix("[C]: in function 'error'") { continue }
            kept.append("  " + t)
            if kept.count >= frames { break }
        }
        if kept.isEmpty { return message }
        return message + "\nstack traceback:\n" + kept.joined(separator: "\n")
    }

    /// Parses a `chunk:line:` prefix (`protocol.lua:12: attempt to …`).
    static func location(in message: String) -> (String, Int)? {
        var rest = Substring(message)
        if rest.hasPrefix("[string \"") {
            guard let close = rest.range(of: "\"]:") else { return nil }
            let chunk = String(rest[rest.startIndex..<close.upperBound].dropLast())
            rest = rest[close.upperBound...]
            let digits = rest.prefix { $0.isNumber }
            guard !digits.isEmpty, rest.dropFirst(digits.count).hasPrefix(":"), let l = Int(digits) else { return nil }
            return (chunk, l)
        }
        guard let colon = rest.firstIndex(of: ":") else { return nil }
        let chunk = rest[..<colon]
        guard !chunk.isEmpty, !chunk.contains(" ") else { return nil }
        let after = rest[rest.index(after: colon)...]
        let digits = after.prefix { $0.isNumber }
        guard !digits.isEmpty, after.dropFirst(digits.count).hasPrefix(":"), let l = Int(digits) else { return nil }
        return (String(chunk), l)
    }

    static func firstScriptFrame(in traceback: String) -> (String, Int)? {
        for line in traceback.split(separator: "\n").dropFirst() {
            let t = line.trimmingCharacters(in: .whitespaces)
            if t.hasPrefix("[C]") || t.hasPrefix("sandbox:") || t.hasPrefix("(...") { continue }
            if let loc = location(in: t) { return loc }
        }
        return nil
    }
}

import Foundation
