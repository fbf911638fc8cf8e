@_spi(Bindings) import LuaHost
import XCTest

/// Typed registration (`LuaState.register(_:function:)`): Swift arguments and results,
/// Lua's argument errors, thrown errors raised as Lua errors.
final class TypedFunctionTests: XCTestCase {
    func testArgumentsAndResultsCrossAsSwiftTypes() throws {
        let state = try makeState()
        state.register("scale", function: { (x: Double, by: Int) -> Double in x * Double(by) })
        state.register("greet", function: { (name: String?) -> String in "hello " + (name ?? "you") })
        state.register("sum", function: { (xs: [Double]) -> Double in xs.reduce(0, +) })
        state.register("pair", function: { () -> [Int] in [1, 2] })
        state.register("flip", function: { (b: Bool) -> Bool in !b })
        XCTAssertEqual(try state.execute("return scale(1.5, 4), greet('ana'), greet(), sum({ 1, 2, 3.5 }), pair()[2], flip(false)"),
                       [.number(6), "hello ana", "hello you", .number(6.5), .integer(2), true])
        // A float with an integer value is an integer argument, as Lua's own functions take it.
        XCTAssertEqual(try state.execute("return scale(2, 3.0)"), [.number(6)])
    }

    func testWrongArgumentsRaiseLuaArgumentErrors() throws {
        let state = try makeState()
        state.register("scale", function: { (x: Double, by: Int) -> Double in x * Double(by) })
        state.register("sum", function: { (xs: [Double]) -> Double in xs.reduce(0, +) })
        XCTAssertEqual(try state.execute("return select(2, pcall(scale, '2', 3))"),
                       ["bad argument #1 to 'scale' (number expected, got string)"])
        XCTAssertEqual(try state.execute("return select(2, pcall(scale, 2, 1.5))"),
                       ["bad argument #2 to 'scale' (integer expected, got number)"])
        XCTAssertEqual(try state.execute("return select(2, pcall(scale, 2))"),
                       ["bad argument #2 to 'scale' (integer expected, got no value)"])
        XCTAssertEqual(try state.execute("return select(2, pcall(sum, { 1, 'x' }))"),
                       ["bad argument #1 to 'sum' (sequence of numbers expected, got table)"])
    }

    func testThrownErrorsBecomeCatchableLuaErrors() throws {
        struct Refused: Error, CustomStringConvertible { var description: String { "refused: too large" } }
        let state = try makeState()
        state.register("check", function: { (x: Int) throws -> Int in
            if x > 10 { throw Refused() }
            return x
        })
        XCTAssertEqual(try state.execute("return check(3)"), [.integer(3)])
        XCTAssertEqual(try state.execute("local ok, e = pcall(check, 11); return ok, e"), [false, "refused: too large"])
        XCTAssertThrowsError(try state.execute("check(12)", chunkName: "=main")) { error in
            XCTAssertTrue("\(error)".contains("refused: too large"), "\(error)")
        }
    }
}
