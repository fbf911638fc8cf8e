import Foundation
@_spi(Bindings) @_spi(Testing) import LuaHost

extension Bindings {
    /// Builtins that exist only to test the golden runner, never in normal runs:
    /// with SENSORIUM_TEST_BUILTINS=1, `__test.pid()` returns the process id, which
    /// differs between two runs, so `sensorium test` must flag the output as
    /// non-deterministic; `__test.hostFunctions()` lists the state's host functions and
    /// `__test.metamethod(name)` returns one of its classes' Swift metamethods.
    func installTestBuiltins(in state: LuaState) {
        guard ProcessInfo.processInfo.environment["SENSORIUM_TEST_BUILTINS"] == "1" else { return }
        state.registerModule("__test", [
            ("pid", { call in
                call.push(Int64(ProcessInfo.processInfo.processIdentifier))
                return 1
            }),
            // The state's registry of host functions (HostileArgumentsTests drives each).
            ("hostFunctions", { call in
                call.push(.array(call.state.hostFunctions.map { .string($0) }))
                return 1
            }),
            // A class's Swift metamethod by its registry name (`SampleSet.__len`), to call directly.
            ("metamethod", { call in
                if let f = call.state.metamethod(named: try call.string(1)) { call.push(f) } else { call.pushNil() }
                return 1
            }),
        ])
    }
}
