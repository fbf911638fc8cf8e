local t = {}
for i = 1, 100 do t[i] = string.rep("x", i % 7) .. tostring(i * 0.5) end
report.row("plain", { n = #t, s = table.concat(t, ",", 1, 10), big = 2^53, small = 1e-300, frac = 1 / 3 })
print(string.format("%d %s %.3f", 42, "ok", math.pi), os.time(), os.date("%Y-%m-%d", 0))
schedule.every(86400, function(now) print(time.day(now)) end)
