import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A program the tests run, spawned with `posix_spawn` and waited for with `waitpid`.
///
/// Not Foundation's `Process`: on Linux it learns that a child ended when a socket it hands
/// the child closes, so a child that leaves a daemon behind (tmux starting its server,
/// Chromium its crash handler) never "ends" and `waitUntilExit` blocks for ever. Here the
/// child gets standard input, output and error and nothing else (every other descriptor is
/// closed), its end is seen by `waitpid`, and a child still running at the deadline is killed.
struct ChildProcess {
    struct Outcome {
        /// The exit status, or 128 + N for a child that died of signal N.
        var status: Int32
        /// The child died of a signal (a trap, or the kill at the deadline).
        var signaled: Bool
        /// The deadline passed and the child was killed.
        var timedOut: Bool
        var stdout: Data
        var stderr: Data
    }

    enum Failure: Error, CustomStringConvertible {
        case spawn(String, Int32)
        var description: String {
            switch self { case let .spawn(path, code): return "cannot start \(path): \(String(cString: strerror(code)))" }
        }
    }

    // glibc's posix_spawn_file_actions_addclosefrom_np (2.34) and _addchdir_np (2.29) are not
    // in Swift's Glibc module (they need _GNU_SOURCE); looked up by name instead.
    private typealias AddClosefrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    private static let addClosefrom = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        .map { unsafeBitCast($0, to: AddClosefrom.self) }
    private static let addChdir = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np")
        .map { unsafeBitCast($0, to: AddChdir.self) }

    /// Closes every descriptor from `first` up in the child: by glibc where it can, else one
    /// by one for each descriptor open now (closing one that is gone is not an error).
    private static func closeFrom(_ actions: inout posix_spawn_file_actions_t, _ first: Int32) {
        if let addClosefrom, addClosefrom(&actions, first) == 0 { return }
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for fd in open.compactMap({ Int32($0) }) where fd >= first { posix_spawn_file_actions_addclose(&actions, fd) }
    }

    private static func changeDirectory(_ actions: inout posix_spawn_file_actions_t, _ path: String) {
        precondition(addChdir != nil, "this C library has no posix_spawn_file_actions_addchdir_np (glibc 2.29+)")
        _ = addChdir!(&actions, path)
    }

    /// Runs `executable arguments…` in `directory` with `environment` (this process's when nil),
    /// `input` on a pipe as standard input, and standard output and error captured to files
    /// (`mergeErrors` sends both to standard output). Kills it (SIGKILL) at `timeout` seconds.
    /// Throws only when the program cannot be started.
    static func run(_ executable: String, _ arguments: [String], in directory: URL? = nil,
                    environment: [String: String]? = nil, input: Data? = nil,
                    mergeErrors: Bool = false, timeout: TimeInterval = 60) throws -> Outcome {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID().uuidString)")
        let outPath = scratch.path + ".out", errPath = scratch.path + ".err"
        defer { unlink(outPath); unlink(errPath) }

        var stdinPipe: [Int32] = [-1, -1]
        guard pipe(&stdinPipe) == 0 else { throw Failure.spawn(executable, errno) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        if mergeErrors {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        }
        closeFrom(&actions, 3)
        if let directory { changeDirectory(&actions, directory.path) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The child starts with default signal handling and nothing blocked, whatever the test runner set.
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none); sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let env = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) }; envp.forEach { free($0) } }

        var pid: pid_t = 0
        let code = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        close(stdinPipe[0])
        guard code == 0 else { close(stdinPipe[1]); throw Failure.spawn(executable, code) }

        // Standard input is fed while waiting, so a child that reads little (or nothing) never
        // blocks the test; a child that ends unread makes `write` fail (EPIPE), not kill us.
        signal(SIGPIPE, SIG_IGN)
        _ = fcntl(stdinPipe[1], F_SETFL, fcntl(stdinPipe[1], F_GETFL) | O_NONBLOCK)
        let bytes = [UInt8](input ?? Data())
        var written = 0
        var inputOpen = true
        func feed() {
            while inputOpen && written < bytes.count {
                let n = bytes.withUnsafeBytes { write(stdinPipe[1], $0.baseAddress! + written, bytes.count - written) }
                if n > 0 { written += n; continue }
                if n < 0 && (errno == EAGAIN || errno == EINTR) { return }
                break                                               // EPIPE: the child stopped reading
            }
            if inputOpen { close(stdinPipe[1]); inputOpen = false }
        }
        feed()

        let deadline = Date().addingTimeInterval(timeout)
        var status: Int32 = 0, timedOut = false
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { break }
            if r < 0 && errno != EINTR { break }
            feed()
            if !timedOut && Date() >= deadline {
                timedOut = true
                kill(pid, SIGKILL)
            }
            usleep(2_000)
        }
        if inputOpen { close(stdinPipe[1]) }
        let termination = status & 0x7f
        let exited = termination == 0
        return Outcome(status: exited ? (status >> 8) & 0xff : 128 + termination, signaled: !exited, timedOut: timedOut,
                       stdout: (try? Data(contentsOf: URL(fileURLWithPath: outPath))) ?? Data(),
                       stderr: mergeErrors ? Data() : ((try? Data(contentsOf: URL(fileURLWithPath: errPath))) ?? Data()))
    }
}
