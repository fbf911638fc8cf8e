import CLuaShim

/// What running Lua states needs under an address-space cap (`ulimit -v`, as clusters and
/// job scripts set it): each state reserves its heap's address space up front
/// (`luashim_heap_reserve_for`: the state's memory limit under a cap), so a process that
/// runs `states` states at once fits or does not, the same way every run. Hosts check
/// before any work (`shortfall`) and refuse flags that cannot fit, naming them.
public enum AddressSpace {
    /// The cap in bytes, or nil where there is none.
    public static var cap: Int? {
        let bytes = luashim_address_space_cap()
        return bytes == 0 ? nil : Int(clamping: bytes)
    }

    /// Bytes one state with `memoryLimit` bytes of heap (0 = none) reserves for its heap.
    public static func heapReserve(memoryLimit: Int) -> Int {
        Int(clamping: luashim_heap_reserve_for(memoryLimit > 0 ? memoryLimit : 0))
    }

    /// Address space a process needs besides its Lua heaps: the program, its libraries and
    /// the first thread's heap (`fixed`), plus a malloc arena and a stack for each thread
    /// that runs a state (`perThread`). Measured with `sensorium run` on Debian (the
    /// smallest `ulimit -v` that runs protocols/sleep_light: 358 MiB for --jobs 1 and
    /// --memory-limit 256, 770 MiB for --jobs 2, 1455 MiB for --jobs 4; 678 MiB for --jobs 4
    /// with --memory-limit 64), with about 10 % headroom.
    public static let fixed = 192 << 20
    /// Address space reserved for each thread that runs Lua states (bytes).
    public static let perThread = 96 << 20

    /// The address space `states` states at once (each on its own thread) need, with the
    /// cap, when the cap is lower; nil when they fit or nothing caps the process.
    public static func shortfall(states: Int, memoryLimit: Int) -> (needed: Int, cap: Int)? {
        guard let cap else { return nil }
        let n = max(states, 1)
        let needed = fixed + n * (perThread + heapReserve(memoryLimit: memoryLimit))
        return needed > cap ? (needed, cap) : nil
    }
}
