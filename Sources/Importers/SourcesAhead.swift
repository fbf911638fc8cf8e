import Foundation

/// Opens the files of an import one ahead of the one being read: a compressed next file
/// starts decompressing on its own thread (as far as its read-ahead, `ZstdSource.lookahead`
/// or `ReadAheadSource`'s blocks) while the current one is parsed and stored, so that a core
/// does not idle at every file's start and end. Memory: one more file's read-ahead.
///
/// Nothing of the next file is seen before its turn: a problem opening it ahead is met
/// again (and thrown) when it is opened in turn, and one decoding it reaches its reader
/// after the bytes before it, as when it is not opened ahead. Dropping this drops (stops)
/// the source opened ahead.
final class SourcesAhead {
    private var ahead: (path: String, source: ByteSource)?

    /// The source of `path` (opened ahead by the last call when it named `path` as `next`),
    /// after opening `next` ahead.
    func open(_ path: String, next: String?) throws -> ByteSource {
        let source: ByteSource
        if let ahead, ahead.path == path { source = ahead.source } else { source = try openByteSource(path) }
        ahead = nil
        if let next, next != path, let opened = try? openByteSource(next) { ahead = (next, opened) }
        return source
    }
}
