-- report: named output tables with a declared column order and number formats.
--
--   local report = require "report"
--   local daily = report.table("daily_steps", {
--     columns = { "day", "steps", "km" },          -- output order (participant is always first)
--     formats = { km = "%.2f" },                    -- printf formats for numbers
--   })
--   daily:row { day = "2026-03-02", steps = 8312, km = 6.1 }
--
-- Rows print as an aligned table after the run, and with --out DIR each table is
-- written as DIR/name.csv and DIR/name.json. Columns without a format print at most
-- three decimals; NaN prints as "nan"; nil leaves the cell empty.

-- Rows of a table declared with `columns` may hold only those columns (and `participant`):
-- any other is an error at the line that adds the row, naming the table, the column and the
-- declared ones; `open = true` in the declaration allows any column.
--
-- One module: the global `report` is this same table, made by the runtime
-- (StudyRuntime/ReportBindings.swift: row, table, finding, chart), so `require "report"`
-- and the global are the same thing, and the checks above happen in Swift.

if type(report) ~= "table" or type(report.table) ~= "function" then
  error("the report module needs a study run: this file declares no study{}, so it runs as a plain Lua script "
    .. "and has no report; declare study{ id = …, usage = …, entitlements = { … }, sensors = { … } } first "
    .. "(see docs/lua-api.md)", 2)
end
return report
