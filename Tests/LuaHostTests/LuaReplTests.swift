@_spi(Bindings) import LuaHost
import XCTest

/// The REPL logic without a terminal.
final class LuaReplTests: XCTestCase {
    private func makeRepl(output: OutputCapture? = nil) throws -> LuaRepl {
        LuaRepl(state: try makeState(limits: LuaLimits(timeLimitMilliseconds: 300), output: output))
    }

    func testMultiLineFunctionDefinition() throws {
        let repl = try makeRepl()
        XCTAssertEqual(repl.prompt, "> ")
        XCTAssertEqual(repl.feed("function f(x)"), .needMore)
        XCTAssertTrue(repl.isContinuing)
        XCTAssertEqual(repl.prompt, ">> ")
        XCTAssertEqual(repl.feed("  local y = x * 2"), .needMore)
        XCTAssertEqual(repl.feed("  return y"), .needMore)
        XCTAssertEqual(repl.feed("end"), .output(""))
        XCTAssertFalse(repl.isContinuing)
        XCTAssertEqual(repl.prompt, "> ")
        XCTAssertEqual(repl.feed("=f(21)"), .output("42"))
        XCTAssertEqual(repl.feed("f(1.5)"), .output("3.0"))
        // A multi-line table constructor, printed as an expression.
        XCTAssertEqual(repl.feed("=  {"), .needMore)
        XCTAssertEqual(repl.feed("  1, 2,"), .needMore)
        XCTAssertEqual(repl.feed("}"), .output("{ 1, 2 }"))
    }

    func testExpressionsPrintWithThePrettyPrinter() throws {
        let repl = try makeRepl()
        XCTAssertEqual(repl.feed("=1 + 1"), .output("2"))
        XCTAssertEqual(repl.feed("= 10 / 4"), .output("2.5"))
        XCTAssertEqual(repl.feed("1, 'two', nil, true"), .output("1\t\"two\"\tnil\ttrue"))
        XCTAssertEqual(repl.feed("{ b = 1, a = { 3, 2, 1 }, [1] = 'first', ['x y'] = false }"),
                       .output(#"{ "first", a = { 3, 2, 1 }, b = 1, ["x y"] = false }"#))
        XCTAssertEqual(repl.feed("{ z = { y = { x = {} } } }"), .output("{ z = { y = { x = {} } } }"))
        XCTAssertEqual(repl.feed("t = { name = 'loop' }"), .output(""))
        XCTAssertEqual(repl.feed("t.self = t"), .output(""))
        XCTAssertEqual(repl.feed("=t"), .output(#"{ name = "loop", self = <cycle: table: 1> }"#))
        XCTAssertEqual(repl.feed("0/0"), .output("nan"))
        XCTAssertEqual(repl.feed("print"), .output("function: 1"))
        // A wide table is laid out on several lines, keys still sorted.
        let wide = repl.feed("{ alpha = string.rep('a', 30), beta = string.rep('b', 30), gamma = string.rep('c', 30) }")
        let a = String(repeating: "a", count: 30), b = String(repeating: "b", count: 30), c = String(repeating: "c", count: 30)
        XCTAssertEqual(wide, .output("{\n  alpha = \"\(a)\",\n  beta = \"\(b)\",\n  gamma = \"\(c)\"\n}"))
        // Statements print nothing.
        XCTAssertEqual(repl.feed("local unused = 1"), .output(""))
        XCTAssertEqual(repl.feed("return"), .output(""))
    }

    func testStateIsKeptBetweenLines() throws {
        let output = OutputCapture()
        let repl = try makeRepl(output: output)
        XCTAssertEqual(repl.feed("x = 10"), .output(""))
        XCTAssertEqual(repl.feed("x = x + 5"), .output(""))
        XCTAssertEqual(repl.feed("=x"), .output("15"))
        XCTAssertEqual(repl.feed("print('hello', x)"), .output(""))
        XCTAssertEqual(output.text, "hello\t15\n")
        XCTAssertEqual(repl.state.global("x"), 15)
        // Locals do not survive a line (as in lua.c).
        XCTAssertEqual(repl.feed("local y = 1"), .output(""))
        XCTAssertEqual(repl.feed("=y"), .output("nil"))
    }

    func testErrorsAreReportedAndTheNextLineWorks() throws {
        let repl = try makeRepl()
        guard case .error(let runtime) = repl.feed("error('boom')") else { return XCTFail("expected an error") }
        XCTAssertTrue(runtime.hasPrefix("stdin:1: boom"), runtime)
        XCTAssertEqual(repl.feed("=1 + 1"), .output("2"))
        guard case .error(let nilIndex) = repl.feed("local t = nil; return t.x") else { return XCTFail("expected an error") }
        XCTAssertTrue(nilIndex.hasPrefix("stdin:1: attempt to index a nil value (local 't')"), nilIndex)
        // A syntax error that is not an unfinished chunk is reported at once.
        guard case .error(let syntax) = repl.feed("x = = 1") else { return XCTFail("expected an error") }
        XCTAssertContains(syntax, "stdin:1:")
        XCTAssertContains(syntax, "unexpected symbol")
        XCTAssertFalse(repl.isContinuing)
        // An error inside a multi-line chunk names its line.
        XCTAssertEqual(repl.feed("do"), .needMore)
        XCTAssertEqual(repl.feed("  local a = 1"), .needMore)
        guard case .error(let third) = repl.feed("  error('third line') end") else { return XCTFail("expected an error") }
        XCTAssertTrue(third.hasPrefix("stdin:3: third line"), third)
        XCTAssertEqual(repl.feed("'still alive'"), .output("\"still alive\""))
        // A stop by a limit is an error too, and the REPL carries on.
        guard case .error(let stop) = repl.feed("while true do end") else { return XCTFail("expected a stop") }
        XCTAssertContains(stop, "stopped: time limit of 300 ms exceeded")
        XCTAssertEqual(repl.feed("=2 * 21"), .output("42"))
        XCTAssertEqual(repl.state.top, 0)
    }

    func testCancellingAPendingChunk() throws {
        let repl = try makeRepl()
        XCTAssertEqual(repl.feed("for i = 1, 3 do"), .needMore)
        repl.cancelPending()
        XCTAssertFalse(repl.isContinuing)
        XCTAssertEqual(repl.feed("=3"), .output("3"))
        // `=` only means "print" at the start of a chunk.
        XCTAssertEqual(repl.feed("s = [["), .needMore)
        XCTAssertEqual(repl.feed("=x]]"), .output(""))
        XCTAssertEqual(repl.feed("=s"), .output(#""=x""#))
    }
}
