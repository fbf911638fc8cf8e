import XCTest
@testable import StudyStore

/// Which mount holds a folder, read from /proc/self/mounts text.
final class SharedStorageDetectionTests: XCTestCase {
    let mounts = """
    /dev/sda1 / ext4 rw,relatime 0 0
    server:/export /shared nfs4 rw,vers=4.2 0 0
    /dev/sdb1 /shared/scratch xfs rw 0 0
    lfs@o2ib:/fs /lus\\040tre lustre rw 0 0
    tmpfs /tmp tmpfs rw 0 0
    """

    func testTheLongestMountPointHoldingTheFolderDecides() {
        XCTAssertEqual(SharedStorage.fileSystemType(of: "/shared/study", mounts: mounts), "nfs4")
        XCTAssertEqual(SharedStorage.fileSystemType(of: "/shared", mounts: mounts), "nfs4")
        XCTAssertEqual(SharedStorage.fileSystemType(of: "/shared/scratch/x", mounts: mounts), "xfs")
        XCTAssertEqual(SharedStorage.fileSystemType(of: "/sharedother", mounts: mounts), "ext4", "a prefix of the name is not the mount")
        XCTAssertEqual(SharedStorage.fileSystemType(of: "/lus tre/a", mounts: mounts), "lustre", "octal escapes in mount points")
        XCTAssertEqual(SharedStorage.fileSystemType(of: "/tmp", mounts: mounts), "tmpfs")
        XCTAssertTrue(SharedStorage.sharedTypes.contains("nfs4") && SharedStorage.sharedTypes.contains("lustre"))
        XCTAssertFalse(SharedStorage.sharedTypes.contains("xfs"))
    }
}
