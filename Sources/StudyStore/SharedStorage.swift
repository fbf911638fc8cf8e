import Foundation

/// Whether a file lives on storage that several machines share (a cluster's network file
/// system), where SQLite's WAL shared memory does not work and file locks may not either
/// (SQLite's documentation: WAL does not work over a network file system). There a replay
/// opens a store as immutable (`RecordedStore.openReadOnly`).
public enum SharedStorage {
    /// File-system types (as /proc/self/mounts names them) that several machines share.
    static let sharedTypes: Set<String> = [
        "nfs", "nfs4", "cifs", "smb3", "smbfs", "lustre", "gpfs", "beegfs", "ceph", "fuse.ceph",
        "glusterfs", "fuse.glusterfs", "afs", "9p", "fuse.sshfs", "panfs", "wekafs", "orangefs",
    ]

    /// The shared file system holding `path` ("nfs4", …), or nil for local storage.
    /// `SENSORIUM_SHARED_STORAGE=1` says yes for any path (a shared file system the list does
    /// not know); `=0` says no.
    public static func holds(_ path: String) -> String? {
        switch ProcessInfo.processInfo.environment["SENSORIUM_SHARED_STORAGE"] {
        case "1": return "SENSORIUM_SHARED_STORAGE=1"
        case "0": return nil
        default: break
        }
        guard let mounts = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8) else { return nil }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().resolvingSymlinksInPath().path
        guard let type = fileSystemType(of: folder, mounts: mounts), sharedTypes.contains(type) else { return nil }
        return type
    }

    /// The type of the mount (a line of /proc/self/mounts: device, mount point, type, …) with
    /// the longest mount point holding `folder` (an absolute path without symbolic links).
    static func fileSystemType(of folder: String, mounts: String) -> String? {
        var best: (length: Int, type: String)? = nil
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3 else { continue }
            let point = unescape(String(fields[1]))
            let holds = point == "/" || folder == point || folder.hasPrefix(point + "/")
            if holds, point.count >= (best?.length ?? -1) { best = (point.count, String(fields[2])) }
        }
        return best?.type
    }

    /// A mount point as the kernel writes it: space, tab, newline and backslash as octal `\040`….
    static func unescape(_ s: String) -> String {
        guard s.contains("\\") else { return s }
        var out = [UInt8](), bytes = Array(s.utf8), i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "\\"), i + 3 < bytes.count,
               let v = UInt8(String(decoding: bytes[(i + 1)...(i + 3)], as: UTF8.self), radix: 8) {
                out.append(v)
                i += 4
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
