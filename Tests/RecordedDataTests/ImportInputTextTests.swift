import Foundation
import XCTest
import SensorKitModel
@testable import StudyStore
@testable import Importers

/// What the importers make of producer text at the edges: SpeziSensorKit's `unknown<N>` for a
/// raw value the catalogue has no name for, text that is not UTF-8, input too long to quote
/// whole, and a MyHeartCounts device column not in the producer's form.
final class ImportInputTextTests: XCTestCase {
    static let watchColumn = "\"model=Watch; name=Apple Watch; systemName=watchOS; systemVersion=10.4; productType=Watch7,2\""
    static let alsHeader = "timestamp,lux,placement,chromacityX,chromacityY,device\n"

    /// A MyDataHelps ambient-light file of an iPhone whose items' placements are `placements`
    /// (JSON text, quotes included), in a fresh export tree; returns the tree's root.
    func mdhLight(_ dir: URL, placements: [String], deviceName: String = "\"iPhone\"") throws -> String {
        let items = placements.enumerated().map { i, p in
            "{\"timestamp\":\((mdhWindowDay + 60 * i) * 1000),\"sample\":{\"lux\":\(10 + i),\"chromaticity\":{\"x\":0.3,\"y\":0.4},\"placement\":\(p)}}"
        }
        let json = "{\"device\":{\"name\":\(deviceName),\"model\":\"iPhone\",\"systemName\":\"iOS\",\"systemVersion\":\"17.1\",\"productType\":\"iPhone15,2\"},"
            + "\"samples\":[\(items.joined(separator: ","))]}"
        try writeFile(dir, "RK.1.P_1-2/sensorkit-ambient-light-sensor/iPhone/P1/p1/\(mdhWindowFileName)", json)
        return dir.appendingPathComponent("RK.1.P_1-2").path
    }

    /// A MyHeartCounts upload tree of participant u1 holding `bytes` as one upload of `sensor`
    /// (`SensorKit/<id>/A.csv`); returns the tree's root.
    func mhcUpload(_ dir: URL, _ sensor: Sensor, _ bytes: [UInt8], name: String = "A.csv") throws -> String {
        try writeFile(dir, "mhc/users/u1/SensorKit/\(sensor.identifier)/\(name)", bytes: bytes)
        return dir.appendingPathComponent("mhc").path
    }

    func importing(_ format: ImportFormat, _ root: String, into dir: URL) throws -> (ImportStats, RecordedStore) {
        let store = try RecordedStore(path: dir.appendingPathComponent("s.sqlite").path)
        return (try store.importData(ImportRequest(format: format, sources: [root], progressBar: false)), store)
    }

    func placements(_ store: RecordedStore, participant: String) throws -> [Int64] {
        let study = try RecordedStudy(store: store)
        let p = try XCTUnwrap(study.participant(participant))
        var out: [Int64] = []
        for d in p.devices {
            let b = try study.source.samples(participant: participant, sensor: .ambientLightSensor, device: d,
                                             writtenAfter: Double(mdhWindowDay - 10), through: Double(mdhWindowDay + 86_400))
            out += recInts(b, "placement")
        }
        return out
    }

    // MARK: unknown<N>

    /// `unknown<N>` is SpeziSensorKit's text for any raw value it has no name for: N a whole
    /// number 0 or more; a sign, a fraction, no digits or an overflow is not that text.
    func testProducerUnknownRawReadsOnlyWholeNumbers() {
        XCTAssertEqual(FieldType.producerUnknownRaw("unknown<9>"), 9)
        XCTAssertEqual(FieldType.producerUnknownRaw("unknown(12)"), 12)
        XCTAssertEqual(FieldType.producerUnknownRaw("Unknown<0>"), 0)
        for text in ["unknown<-1>", "unknown<+1>", "unknown<9.5>", "unknown<>", "unknown<x>", "unknown< 9>", "unknown<99999999999999999999>",
                     "unknown9", "front<9>"] {
            XCTAssertNil(FieldType.producerUnknownRaw(text), text)
        }
        let placement = MHCFormat.placementType
        XCTAssertNil(placement.rawValue(forProducerName: "unknown<9>"), "a named value only: the importers name an unnamed one in the summary")
        XCTAssertEqual(placement.rawValue(forProducerName: "unknown<3>"), 3)
    }

    /// MyDataHelps: `unknown<9>` (a placement newer than the catalogue) is stored as 9 and
    /// named in the summary; a negative or non-integer N stays an error naming the item.
    func testMyDataHelpsUnnamedPlacementIsStoredAndNamed() throws {
        let dir = try recordedTempDir(self)
        let root = try mdhLight(dir.appendingPathComponent("good"), placements: ["\"FrontTopRight\"", "\"unknown<9>\"", "\"unknown<12>\""])
        let (stats, store) = try importing(.mdhJSON, root, into: dir)
        XCTAssertEqual(stats.rowsStored, 3)
        XCTAssertEqual(try placements(store, participant: "P1"), [5, 9, 12])
        XCTAssertEqual(stats.forms[ImportForm.unnamedRawValue(.ambientLightSensor, field: "placement", raw: 9)], 1)
        XCTAssertEqual(stats.forms[ImportForm.unnamedRawValue(.ambientLightSensor, field: "placement", raw: 12)], 1)
        XCTAssertTrue(stats.report().contains("form: ambientLightSensor placement unknown<9>: raw value 9, which the catalogue has no name for (stored as 9): 1 file(s)"),
                      stats.report())
        for bad in ["\"unknown<-1>\"", "\"unknown<9.5>\"", "\"unknown<nine>\""] {
            let other = dir.appendingPathComponent("bad\(bad.count)\(bad.hashValue & 0xFFFF)")
            let badRoot = try mdhLight(other, placements: ["\"frontTop\"", bad])
            XCTAssertThrowsError(try importing(.mdhJSON, badRoot, into: other)) { e in
                XCTAssertTrue("\(e)".contains("at $.samples[1].sample.placement, column 'placement': expected one of"), "\(e)")
            }
        }
    }

    /// MyHeartCounts: the same in a CSV upload.
    func testMyHeartCountsUnnamedPlacementIsStoredAndNamed() throws {
        let dir = try recordedTempDir(self)
        let t = mdhWindowDay
        let csv = Self.alsHeader + "\(t),5,frontTop,0,0,\(Self.watchColumn)\n\(t + 60),6,unknown<9>,0,0,\(Self.watchColumn)\n"
        let root = try mhcUpload(dir.appendingPathComponent("good"), .ambientLightSensor, Array(csv.utf8))
        let (stats, store) = try importing(.mhc, root, into: dir)
        XCTAssertEqual(stats.rowsStored, 2)
        XCTAssertEqual(try placements(store, participant: "u1"), [1, 9])
        XCTAssertEqual(stats.forms[ImportForm.unnamedRawValue(.ambientLightSensor, field: "placement", raw: 9)], 1)
        for (k, bad) in ["unknown<-1>", "unknown<9.5>", "garbage"].enumerated() {
            let other = dir.appendingPathComponent("bad\(k)")
            let badRoot = try mhcUpload(other, .ambientLightSensor, Array((Self.alsHeader + "\(t),5,\(bad),0,0,\(Self.watchColumn)\n").utf8))
            XCTAssertThrowsError(try importing(.mhc, badRoot, into: other)) { e in
                XCTAssertTrue("\(e)".contains("A.csv:2, column 'placement': expected a placement"), "\(e)")
                XCTAssertTrue("\(e)".contains("found '\(bad)'"), "\(e)")
            }
        }
    }

    // MARK: UTF-8

    /// A JSON string that is not UTF-8 (a device name, a placement) is an error naming the
    /// line and path, never text with U+FFFD in it; so is a lone surrogate escape.
    func testJSONStringThatIsNotUTF8IsAnError() throws {
        let dir = try recordedTempDir(self)
        func failure(_ name: String, _ edit: ([UInt8]) -> [UInt8]) throws -> String {
            let sub = dir.appendingPathComponent(name)
            let root = try mdhLight(sub, placements: ["\"FrontTopRight\"", "\"FrontTop\""])
            let file = sub.appendingPathComponent("RK.1.P_1-2/sensorkit-ambient-light-sensor/iPhone/P1/p1/\(mdhWindowFileName)").path
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
            try Data(edit(bytes)).write(to: URL(fileURLWithPath: file))
            var message = ""
            XCTAssertThrowsError(try importing(.mdhJSON, root, into: sub)) { message = "\($0)" }
            return message
        }
        func replacing(_ old: String, _ new: [UInt8]) -> ([UInt8]) -> [UInt8] {
            { bytes in
                let o = Array(old.utf8)
                guard let at = (0...(bytes.count - o.count)).first(where: { Array(bytes[$0..<$0 + o.count]) == o }) else { return bytes }
                return Array(bytes[..<at]) + new + Array(bytes[(at + o.count)...])
            }
        }
        let name = try failure("name", replacing("\"iPhone\"", Array("\"i".utf8) + [0xFF, 0xFE] + Array("Phone\"".utf8)))
        XCTAssertTrue(name.contains(":1 at $.device.name: a string is not UTF-8 text (byte 0xFF at byte 2 of it)"), name)
        let placement = try failure("placement", replacing("\"FrontTop\"", Array("\"Front".utf8) + [0xFF] + Array("Top\"".utf8)))
        XCTAssertTrue(placement.contains("at $.samples[1].sample.placement: a string is not UTF-8 text (byte 0xFF at byte 6 of it)"), placement)
        let escaped = try failure("escaped", replacing("\"FrontTop\"", Array("\"Front\\u00e9\\nTop".utf8) + [0xC3] + Array("\"".utf8)))
        XCTAssertTrue(escaped.contains("at $.samples[1].sample.placement: a string is not UTF-8 text (byte 0xC3 at byte"), escaped)
        for (k, escape) in ["\\ud800", "\\udc00", "\\ud800\\u0041"].enumerated() {
            let lone = try failure("lone\(k)", replacing("\"FrontTop\"", Array("\"Front\(escape)Top\"".utf8)))
            XCTAssertTrue(lone.contains("at $.samples[1].sample.placement: a lone UTF-16 surrogate escape"), lone)
            XCTAssertTrue(lone.contains("is not valid"), lone)
        }
        // A pair is one character.
        let sub = dir.appendingPathComponent("pair")
        let root = try mdhLight(sub, placements: ["\"FrontTop\""], deviceName: "\"i\\ud83d\\ude00\"")
        let (_, store) = try importing(.mdhJSON, root, into: sub)
        XCTAssertEqual(try RecordedStudy(store: store).participant("P1")?.devices.first?.name, "i\u{1F600}")
    }

    /// A MyHeartCounts CSV field that is not UTF-8 (the device, a placement) is an error
    /// naming the file, line and column.
    func testCSVFieldThatIsNotUTF8IsAnError() throws {
        let dir = try recordedTempDir(self)
        let t = mdhWindowDay
        let rows: [(String, [UInt8], String)] = [
            ("placement", Array("\(t),5,front".utf8) + [0xFF] + Array("Top,0,0,\(Self.watchColumn)\n".utf8), "column 'placement': the field is not UTF-8 text (byte 0xFF at byte 6 of it)"),
            ("device", Array("\(t),5,frontTop,0,0,\"model=Watch; name=A".utf8) + [0xFE] + Array("; systemName=watchOS; systemVersion=10; productType=Watch7,2\"\n".utf8),
             "column 'device': the field is not UTF-8 text (byte 0xFE at byte 20 of it)"),
        ]
        for (name, row, expected) in rows {
            let sub = dir.appendingPathComponent(name)
            let root = try mhcUpload(sub, .ambientLightSensor, Array(Self.alsHeader.utf8) + row)
            XCTAssertThrowsError(try importing(.mhc, root, into: sub)) { e in
                XCTAssertTrue("\(e)".contains("A.csv:2, \(expected): expected UTF-8 text"), "\(e)")
            }
        }
        // The batched reader (accelerometer) checks its device column too.
        let sub = dir.appendingPathComponent("batched")
        let root = try mhcUpload(sub, .accelerometer, Array("timestamp,identifier,x,y,z,device\n\(t),1,0.1,0.2,0.3,\"model=iPhone; name=".utf8) + [0xC0, 0x80]
                                    + Array("; systemName=iOS; systemVersion=17; productType=iPhone15,2\"\n".utf8))
        XCTAssertThrowsError(try importing(.mhc, root, into: sub)) { e in
            XCTAssertTrue("\(e)".contains("A.csv:2, column 'device': the field is not UTF-8 text (byte 0xC0"), "\(e)")
        }
    }

    // MARK: Long input, device form

    /// A message quotes at most an excerpt of input text, with the whole text's length.
    func testMessagesQuoteAnExcerptOfLongInput() throws {
        XCTAssertEqual(ImportError.excerpt("short"), "short")
        let long = String(repeating: "x", count: 3_000_000)
        XCTAssertEqual(ImportError.excerpt(long), String(repeating: "x", count: 100) + "… (3000000 bytes)")
        let dir = try recordedTempDir(self)
        let t = mdhWindowDay
        // A phone's heart rate (refused, named in a warning) whose device text is 3 MB.
        let csv = "timestamp,value,confidence,device\n\(t),60,3,\(long)\n\(t + 60),61,3,\(long)\n"
        let root = try mhcUpload(dir.appendingPathComponent("device"), .heartRate, Array(csv.utf8))
        let (stats, _) = try importing(.mhc, root, into: dir.appendingPathComponent("device"))
        XCTAssertEqual(stats.rowsRead, 2)
        XCTAssertFalse(stats.warnings.isEmpty)
        for line in stats.report().split(separator: "\n") { XCTAssertLessThan(line.count, 700, String(line.prefix(300))) }
        XCTAssertTrue(stats.warnings.contains { $0.contains("… (3000000 bytes)") }, "\(stats.warnings.map { $0.prefix(200) })")
        // An error quoting a 3 MB field.
        let sub = dir.appendingPathComponent("placement")
        let bad = try mhcUpload(sub, .ambientLightSensor, Array((Self.alsHeader + "\(t),5,\(long),0,0,\(Self.watchColumn)\n").utf8))
        XCTAssertThrowsError(try importing(.mhc, bad, into: sub)) { e in
            XCTAssertLessThan("\(e)".count, 700, String("\(e)".prefix(300)))
            XCTAssertTrue("\(e)".hasSuffix("found '\(String(repeating: "x", count: 100))… (3000000 bytes)'"), String("\(e)".suffix(200)))
        }
    }

    /// A device column not in the form MyHeartCounts writes (`model=…; name=…; systemName=…;
    /// systemVersion=…; productType=…`) is warned of once per file, naming its first line,
    /// the text and what was made of it; the producer's form is not.
    func testDeviceColumnNotInTheProducerFormIsWarnedOncePerFile() throws {
        let dir = try recordedTempDir(self)
        let t = mdhWindowDay
        let heart = "timestamp,value,confidence,device\n\(t),60,3,\(Self.watchColumn)\n\(t + 60),61,3,Apple Watch Series 9\n\(t + 120),62,3,Apple Watch Series 9\n"
        let accel = "timestamp,identifier,x,y,z,device\n\(t),1,0.1,0.2,0.3,iPhone\n\(t),1,0.1,0.2,0.3,iPhone\n"
        try writeFile(dir, "mhc/users/u1/SensorKit/\(Sensor.heartRate.identifier)/A.csv", heart)
        try writeFile(dir, "mhc/users/u1/SensorKit/\(Sensor.accelerometer.identifier)/B.csv", accel)
        let (stats, _) = try importing(.mhc, dir.appendingPathComponent("mhc").path, into: dir)
        XCTAssertEqual(stats.rowsRead, 5)
        let formWarnings = stats.warnings.filter { $0.contains("not the form MyHeartCounts writes") }
        XCTAssertEqual(formWarnings.count, 2, "\(stats.warnings)")
        XCTAssertTrue(formWarnings.contains { $0.hasSuffix("A.csv:3: the device column holds 'Apple Watch Series 9', not the form MyHeartCounts writes "
                                                          + "(model=…; name=…; systemName=…; systemVersion=…; productType=…): it names no model, name, systemName, systemVersion, productType; "
                                                          + "stored as a watch with those fields empty, the model 'Watch' guessed from the text (the file's first such row; later ones not named)") },
                      "\(formWarnings)")
        XCTAssertTrue(formWarnings.contains { $0.contains("B.csv:2: the device column holds 'iPhone'") }, "\(formWarnings)")
    }
}
