import CZlib
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import XCTest

/// The HTML run report in a real browser: `sensorium run protocols/sleep_light --out DIR`,
/// then headless Chromium (Debian's `chromium`, installed by `make deps`) renders
/// DIR/index.html to PNG. The page must not be blank, every chart's area must hold a
/// drawing, and every SVG the run wrote must be well-formed XML.
final class BrowserReportTests: XCTestCase {
    static let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("BrowserReportTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let folder { try? FileManager.default.removeItem(at: folder) }
    }

    /// Runs a program to its end; returns its exit status and standard output.
    @discardableResult
    func run(_ executable: String, _ arguments: [String], in directory: URL? = nil) throws -> (Int32, Data) {
        let outcome = try ChildProcess.run(executable, arguments, in: directory, timeout: 300)
        return (outcome.status, outcome.stdout)
    }

    func chromium() throws -> String {
        for path in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] where FileManager.default.isExecutableFile(atPath: path) { return path }
        XCTFail("headless Chromium is needed for this test: `make deps` installs Debian's chromium package")
        throw CocoaError(.fileNoSuchFile)
    }

    /// Chromium's flags for a deterministic headless render: no sandbox (CI runs as root),
    /// no GPU, scale factor 1, its own profile folder.
    func browserFlags(_ profile: String) -> [String] {
        ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--force-device-scale-factor=1",
         "--no-first-run", "--user-data-dir=\(profile)"]
    }

    func testRunReportRendersInChromiumWithEveryChartDrawn() throws {
        let browser = try chromium()
        guard let sensorium = SensoriumCLITests.executable else { return XCTFail("sensorium executable not found") }
        let out = folder.appendingPathComponent("report")
        let (status, _) = try run(sensorium.path, ["run", "protocols/sleep_light", "--out", out.path], in: BrowserReportTests.repoRoot)
        XCTAssertEqual(status, 0)

        // Every SVG (files and the page's inline copies) parses as XML.
        let svgs = try FileManager.default.contentsOfDirectory(atPath: out.path).filter { $0.hasSuffix(".svg") }.sorted()
        XCTAssertGreaterThanOrEqual(svgs.count, 3)
        for name in svgs {
            let doc = try XMLDocument(data: try Data(contentsOf: out.appendingPathComponent(name)))
            XCTAssertEqual(doc.rootElement()?.name, "svg", name)
        }
        let page = try String(contentsOf: out.appendingPathComponent("index.html"), encoding: .utf8)
        var inline = 0
        var rest = page[...]
        while let open = rest.range(of: "<svg "), let close = rest.range(of: "</svg>", range: open.upperBound..<rest.endIndex) {
            _ = try XMLDocument(data: Data(rest[open.lowerBound..<close.upperBound].utf8))
            inline += 1
            rest = rest[close.upperBound...]
        }
        XCTAssertEqual(inline, svgs.count, "every chart is inline in the page")

        // Where each chart sits on the page: a copy of the page with a script that writes the
        // figures' boxes (and the page height) into the title, read back with --dump-dom.
        let probe = out.appendingPathComponent("probe.html")
        let script = """
        <script>const b = document.getElementById("findings-banner").getBoundingClientRect();
          document.title = JSON.stringify({h: document.documentElement.scrollHeight,
          banner: [Math.round(b.left), Math.round(b.top + window.scrollY), Math.round(b.width), Math.round(b.height)], boxes:
          Array.from(document.querySelectorAll("figure svg")).map(s => { const r = s.getBoundingClientRect();
          return [Math.round(r.left), Math.round(r.top + window.scrollY), Math.round(r.width), Math.round(r.height)]; })});</script>
        """
        try Data(page.replacingOccurrences(of: "</body>", with: script + "</body>").utf8).write(to: probe)
        let width = 1200
        let (dumpStatus, dom) = try run(browser, browserFlags(folder.appendingPathComponent("profile1").path)
            + ["--window-size=\(width),900", "--dump-dom", probe.absoluteString])
        XCTAssertEqual(dumpStatus, 0)
        let domText = String(decoding: dom, as: UTF8.self)
        guard let t0 = domText.range(of: "<title>"), let t1 = domText.range(of: "</title>", range: t0.upperBound..<domText.endIndex) else {
            return XCTFail("no title in the dumped page")
        }
        let json = String(domText[t0.upperBound..<t1.lowerBound]).replacingOccurrences(of: "&quot;", with: "\"")
        struct Layout: Decodable { var h: Int; var banner: [Int]; var boxes: [[Int]] }
        let layout = try JSONDecoder().decode(Layout.self, from: Data(json.utf8))
        XCTAssertEqual(layout.boxes.count, svgs.count)

        // The page itself, whole, as PNG.
        let png = folder.appendingPathComponent("page.png")
        let (shotStatus, _) = try run(browser, browserFlags(folder.appendingPathComponent("profile2").path)
            + ["--window-size=\(width),\(layout.h)", "--screenshot=\(png.path)", out.appendingPathComponent("index.html").absoluteString])
        XCTAssertEqual(shotStatus, 0)
        let image = try PNGImage(data: Data(contentsOf: png))
        XCTAssertEqual(image.width, width)
        XCTAssertEqual(image.height, layout.h)

        // Not blank: a good share of the page is ink, in several colours.
        let whole = image.stats(x: 0, y: 0, width: image.width, height: image.height)
        XCTAssertGreaterThan(whole.inkShare, 0.02, "the page looks blank")
        XCTAssertGreaterThan(whole.colours, 20)
        // The findings banner is the first thing under the title, drawn in its green ("No findings").
        XCTAssertLessThan(layout.banner[1], 200, "the banner sits at the top")
        XCTAssertGreaterThan(layout.banner[2], 600)
        let bannerPixel = image.pixel(x: layout.banner[0] + layout.banner[2] - 20, y: layout.banner[1] + layout.banner[3] / 2)
        XCTAssertEqual(bannerPixel.g, 245, "banner background #e8f5e9, got \(bannerPixel)")
        XCTAssertGreaterThan(Int(bannerPixel.g), Int(bannerPixel.r))
        // Cohort charts come before the per-participant panels, which share one colour scale:
        // every light_by_hour panel's scale has the same labelled ticks.
        let cohortAt = try XCTUnwrap(page.range(of: "id=\"chart-evening_light_onset\"")).lowerBound
        XCTAssertTrue(try ["Lea", "Tom", "Ute", "Max"].allSatisfy { cohortAt < (try XCTUnwrap(page.range(of: "id=\"chart-light_by_hour_\($0)\""))).lowerBound })
        let panels = svgs.filter { $0.hasPrefix("light_by_hour_") }
        XCTAssertEqual(panels.count, 4)
        let scaleTicks = try panels.map { name -> [String] in
            let text = try String(contentsOf: out.appendingPathComponent(name), encoding: .utf8)
            let title: Range<String.Index> = try XCTUnwrap(text.range(of: "log scale [lux]"))
            let legend = text[title.lowerBound...]
            return legend.components(separatedBy: "</text>").dropLast().map { $0.components(separatedBy: ">").last ?? "" }
        }
        XCTAssertGreaterThanOrEqual(scaleTicks[0].count, 4, "labelled ticks: \(scaleTicks[0])")
        XCTAssertTrue(scaleTicks.allSatisfy { $0 == scaleTicks[0] }, "\(scaleTicks)")
        let onset = try String(contentsOf: out.appendingPathComponent("evening_light_onset.svg"), encoding: .utf8)
        XCTAssertTrue(onset.contains(">02:00</text>"), "sleep onset on a clock-time axis")
        // Each chart is drawn: its box holds ink, and colours beyond black, white and grey.
        for (i, box) in layout.boxes.enumerated() {
            XCTAssertEqual(box.count, 4)
            XCTAssertGreaterThan(box[2], 300, "chart \(i) \(svgs[i]) has a width")
            XCTAssertGreaterThan(box[3], 150, "chart \(i) has a height")
            let s = image.stats(x: box[0], y: box[1], width: box[2], height: box[3])
            XCTAssertGreaterThan(s.inkShare, 0.03, "chart \(i) (\(svgs[i])) looks empty")
            XCTAssertGreaterThan(s.chromatic, 200, "chart \(i) (\(svgs[i])) has no coloured marks")
        }
    }
}

/// An 8-bit RGB or RGBA PNG, decoded (non-interlaced, as Chromium writes them).
struct PNGImage {
    var width = 0, height = 0
    var channels = 3
    var pixels: [UInt8] = []

    struct DecodeError: Error, CustomStringConvertible { var description: String }

    init(data: Data) throws {
        let bytes = [UInt8](data)
        guard bytes.count > 8, bytes[0..<8].elementsEqual([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else { throw DecodeError(description: "not a PNG") }
        func u32(_ i: Int) -> Int { Int(bytes[i]) << 24 | Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3]) }
        var i = 8
        var idat: [UInt8] = []
        while i + 8 <= bytes.count {
            let length = u32(i)
            let type = String(decoding: bytes[(i + 4)..<(i + 8)], as: UTF8.self)
            let body = (i + 8)..<(i + 8 + length)
            guard body.upperBound <= bytes.count else { throw DecodeError(description: "truncated chunk \(type)") }
            if type == "IHDR" {
                width = u32(body.lowerBound)
                height = u32(body.lowerBound + 4)
                let depth = bytes[body.lowerBound + 8], colour = bytes[body.lowerBound + 9], interlace = bytes[body.lowerBound + 12]
                guard depth == 8, colour == 2 || colour == 6, interlace == 0 else {
                    throw DecodeError(description: "unsupported PNG (depth \(depth), colour type \(colour), interlace \(interlace))")
                }
                channels = colour == 6 ? 4 : 3
            } else if type == "IDAT" {
                idat += bytes[body]
            }
            i = body.upperBound + 4
        }
        let stride = width * channels
        var raw = [UInt8](repeating: 0, count: height * (stride + 1))
        var rawLength = uLongf(raw.count)
        let status = raw.withUnsafeMutableBufferPointer { out in
            idat.withUnsafeBufferPointer { input in uncompress(out.baseAddress, &rawLength, input.baseAddress, uLong(input.count)) }
        }
        guard status == Z_OK, Int(rawLength) == raw.count else { throw DecodeError(description: "inflate failed (\(status))") }
        pixels = [UInt8](repeating: 0, count: height * stride)
        for y in 0..<height {
            let filter = raw[y * (stride + 1)]
            for x in 0..<stride {
                let v = Int(raw[y * (stride + 1) + 1 + x])
                let a = x >= channels ? Int(pixels[y * stride + x - channels]) : 0
                let b = y > 0 ? Int(pixels[(y - 1) * stride + x]) : 0
                let c = x >= channels && y > 0 ? Int(pixels[(y - 1) * stride + x - channels]) : 0
                let predicted: Int
                switch filter {
                case 0: predicted = 0
                case 1: predicted = a
                case 2: predicted = b
                case 3: predicted = (a + b) / 2
                case 4:
                    let p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c)
                    predicted = pa <= pb && pa <= pc ? a : (pb <= pc ? b : c)
                default: throw DecodeError(description: "bad filter \(filter) on row \(y)")
                }
                pixels[y * stride + x] = UInt8((v + predicted) & 0xFF)
            }
        }
    }

    /// The colour at (x, y).
    func pixel(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
        let p = (y * width + x) * channels
        return (pixels[p], pixels[p + 1], pixels[p + 2])
    }

    /// In a rectangle (clipped to the image): the share of pixels that are not near-white,
    /// the number of distinct colours, and the count of clearly coloured (non-grey) pixels.
    func stats(x: Int, y: Int, width w: Int, height h: Int) -> (inkShare: Double, colours: Int, chromatic: Int) {
        var ink = 0, total = 0, chromatic = 0
        var seen = Set<Int>()
        for row in max(0, y)..<min(height, y + h) {
            for col in max(0, x)..<min(width, x + w) {
                let p = (row * width + col) * channels
                let r = Int(pixels[p]), g = Int(pixels[p + 1]), b = Int(pixels[p + 2])
                total += 1
                if r < 235 || g < 235 || b < 235 { ink += 1 }
                if max(r, g, b) - min(r, g, b) > 40 { chromatic += 1 }
                if seen.count < 10_000 { seen.insert(r << 16 | g << 8 | b) }
            }
        }
        return (total > 0 ? Double(ink) / Double(total) : 0, seen.count, chromatic)
    }
}
