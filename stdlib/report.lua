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

local core = report  -- the runtime's report module: row, table
local M = { row = core.row }

local Table = {}
Table.__index = Table

-- Adds a row (a table of column = value; numbers, strings and booleans).
function Table:row(values)
  for name in pairs(values) do
    if self.known and not self.known[name] then
      error(string.format("report table '%s' has no column '%s' (declared: %s)", self.name, name,
        table.concat(self.columns, ", ")), 2)
    end
  end
  core.row(self.name, values)
end

-- Declares a table and returns it; rows may then be added with t:row{...}.
function M.table(name, spec)
  spec = spec or {}
  core.table(name, { columns = spec.columns, formats = spec.formats })
  local known
  if spec.columns and not spec.open then
    known = { participant = true }
    for _, c in ipairs(spec.columns) do known[c] = true end
  end
  return setmetatable({ name = name, columns = spec.columns or {}, known = known }, Table)
end

return M
