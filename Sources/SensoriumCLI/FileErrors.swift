import Foundation

/// Foundation's file errors in the user's terms: the path, what went wrong, what to do —
/// instead of `Error Domain=NSCocoaErrorDomain Code=516 …`.
enum FileErrors {
    /// A sentence for `error` when it is a Foundation file error, else nil.
    static func describe(_ error: Error) -> String? {
        let ns = error as NSError
        guard ns.domain == NSCocoaErrorDomain || ns.domain == NSPOSIXErrorDomain else { return nil }
        let path = (ns.userInfo[NSFilePathErrorKey] as? String) ?? (ns.userInfo[NSURLErrorKey] as? URL)?.path
        let posix = ns.domain == NSPOSIXErrorDomain ? ns.code : ((ns.userInfo[NSUnderlyingErrorKey] as? NSError).map { $0.domain == NSPOSIXErrorDomain ? $0.code : 0 } ?? 0)
        let what: String
        switch (ns.domain == NSCocoaErrorDomain ? ns.code : -1, posix) {
        case (NSFileWriteOutOfSpaceError, _), (_, Int(ENOSPC)), (_, Int(EDQUOT)): what = "the disk is full; free space or write elsewhere"
        case (NSFileWriteFileExistsError, _), (_, Int(EEXIST)): what = "a file of that name is in the way (a folder is needed here); choose another path"
        case (NSFileWriteNoPermissionError, _), (NSFileReadNoPermissionError, _), (_, Int(EACCES)), (_, Int(EPERM)):
            what = "permission denied; choose a folder you may write"
        case (NSFileWriteVolumeReadOnlyError, _), (_, Int(EROFS)): what = "the file system is read-only; choose another folder"
        case (NSFileNoSuchFileError, _), (NSFileReadNoSuchFileError, _), (_, Int(ENOENT)):
            what = "no such file or folder (is a parent folder missing or not writable?)"
        case (_, Int(ENOTDIR)): what = "a part of the path is a file, not a folder"
        case (_, Int(EISDIR)): what = "a folder is in the way where a file is needed"
        default: return nil
        }
        return (path.map { "\($0): " } ?? "") + what
    }
}

/// A command's failure that is not a mistake in how it was called: a missing file, a folder
/// without a protocol, a step that failed. Printed as `Error: …` without the usage text
/// (which `ValidationError` adds, and which is only for flags and arguments), exit status 1.
struct CommandError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
