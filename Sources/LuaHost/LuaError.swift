/// An error out of Lua, as a Swift value.
///
/// `message` is what the script raised, with its `chunk:line:` prefix when Lua
/// gave one; `chunk` and `line` are parsed from that prefix (or from the first
/// traceback frame in a script). `traceback` is the stack at the point of the
/// error, when one could be taken. `value` keeps a non-string error object.
public struct LuaError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure ended the call.
    public enum Kind: String, Sendable {
        /// The chunk did not compile.
        case syntax
        /// The code raised an error.
        case runtime
        /// Lua could not allocate memory.
        case memory
        /// The message handler itself failed.
        case errorHandler
        /// A limit stopped the script: see `stop`.
        case stopped
    }

    /// Which limit stopped a script.
    public enum Stop: String, Sendable {
        /// `LuaLimits.instructionBudget` ran out.
        case instructionBudget = "instruction budget"
        /// `LuaLimits.timeLimitMilliseconds` passed.
        case timeLimit = "time limit"
        /// `LuaLimits.memoryBytes` was reached.
        case memoryLimit = "memory limit"
        /// `LuaState.interrupt()` (Ctrl-C) stopped it.
        case interrupted
    }

    /// What kind of failure this is.
    public var kind: Kind
    /// The error message, with its `chunk:line:` prefix when Lua gave one.
    public var message: String
    /// The chunk (file) the error happened in, when known.
    public var chunk: String?
    /// The line the error happened on, when known.
    public var line: Int?
    /// The Lua stack at the error, when one could be taken.
    public var traceback: String?
    /// The limit that stopped the script (`kind == .stopped`).
    public var stop: Stop?
    /// The error object when it was not a string (a table, a userdata).
    public var value: LuaValue?
    /// The Swift error itself when the error value was one a host function raised as a
    /// `LuaUncatchableError` (or a Swift error Swift code wrapped here): its identity,
    /// for the embedder to act on by type rather than by message.
    public var hostError: (any Error)?

    /// An error of `kind` with `message` and what is known of where and why.
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
