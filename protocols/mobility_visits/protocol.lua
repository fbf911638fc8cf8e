-- Mobility from visits: time at home and places per day.
--
-- GPS-free mobility measures are a staple of digital phenotyping: time spent at home and
-- the number of distinct places visited track depression severity and recovery (Saeb et
-- al. 2015, J Med Internet Res 17:e175; homestay and location entropy). SensorKit's
-- visits sensor gives exactly what such studies need and nothing more: one record per
-- stay at a significant place, with fuzzy arrival and departure windows, the distance
-- from home and a category (home, work, school, gym, unknown) — never coordinates.
--
-- A visit is written when the participant leaves the place, and then held 24 hours. So
-- each morning at 09:00 the protocol analyses the days that ended more than two days
-- ago: by then the night that closed the day, and the stays of the day, have all been
-- written and released (an overnight stay is only written when the person leaves).
--
-- Days are the participant's local days, and local time follows travel: the scenario
-- has a trip to New York and back, so one local day has 29 hours and one 19. (The
-- simulator moves the participant's clock, not their places: in New York the visits
-- still go to "home" and "work". Real data would show a hotel thousands of km away,
-- which the `far from home` note is there for.)

study {
  id = "mobility-visits", title = "Mobility: time at home and places per day",
  usage = "Records which kinds of places you spend time at (home, work, elsewhere), without locations, to study daily mobility.",
  privacy_policy = "https://example.org/mobility/privacy",
  entitlements = { "visits" },
  sensors = {
    visits = { detail = "Records when you arrive at and leave significant places, and how far they are from home — never where they are.", required = true },
  },
}

local report = require "report"
local time = require "time"
local expect = require "expect"

local CATEGORY = { [0] = "unknown", "home", "work", "school", "gym" }

local daily = report.table("daily_mobility", {
  columns = { "day", "weekday", "zone", "day_h", "home_h", "work_h", "elsewhere_h", "unobserved_h", "places", "visits",
              "max_km", "note" },
  formats = { day_h = "%.0f", home_h = "%.1f", work_h = "%.1f", elsewhere_h = "%.1f", unobserved_h = "%.1f", max_km = "%.1f" },
})
local people = report.table("participant_summary", {
  columns = { "days", "home_pct", "places_per_day", "distinct_places", "max_km", "zone_changes" },
  formats = { home_pct = "%.0f", places_per_day = "%.1f", max_km = "%.1f" },
})

local visits = sensors.visits              -- study{} asks for it and records it once granted

-- A visit's stay: from the middle of its arrival window to the middle of its departure
-- window. (`time` is the start of the arrival window, SRVisit.arrivalDateInterval.start.)
local function stay(v)
  return (v.time + v.arrivalEnd) / 2, (v.departureStart + v.departureEnd) / 2
end

-- Local days as the participant lived them. At noon each day the protocol notes the time
-- zone and where that local day ends; a day starts where the previous one ended. So a
-- day of travel is as long as it was for the participant: flying west it has more than
-- 24 hours, flying back east fewer.
local lived = {}                          -- { day, start, stop, zone }, in order
schedule.daily("12:00", function(now)
  local start = #lived > 0 and lived[#lived].stop or time.startOfDay(now)
  lived[#lived + 1] = { day = time.day(now), start = start, stop = time.nextDay(now), zone = time.timezone() }
end)

local allPlaces, totals = {}, { days = 0, home = 0, observed = 0, places = 0, maxKm = 0, travel = 0 }
local analysed = 0

local function analyse(d, now, zoneBefore)
  -- Every visit written from the day's start (a stay reaching into the day is written
  -- when it ends, so on or after that) until what the hold has released. SensorKit may
  -- deliver a record twice: distinct() drops those exact duplicates natively.
  local byCategory, places, count, maxKm = { home = 0, work = 0, elsewhere = 0 }, {}, 0, 0
  for v in visits:samples { from = d.start, to = now }:distinct():rows() do
    local a, b = stay(v)
    local s, e = math.max(a, d.start), math.min(b, d.stop)
    if e > s then
      local cat = CATEGORY[v.locationCategory] or "unknown"
      local kind = (cat == "home" or cat == "work") and cat or "elsewhere"
      byCategory[kind] = byCategory[kind] + (e - s) / 3600
      count = count + 1
      places[v.identifier] = true
      allPlaces[v.identifier] = true
      maxKm = math.max(maxKm, v.distanceFromHome / 1000)
    end
  end
  local nPlaces = 0
  for _ in pairs(places) do nPlaces = nPlaces + 1 end
  local dayHours = (d.stop - d.start) / 3600
  local observed = byCategory.home + byCategory.work + byCategory.elsewhere
  local row = {
    day = d.day, weekday = time.format(d.start + hours(12), "%a"), zone = d.zone, day_h = dayHours,
    home_h = byCategory.home, work_h = byCategory.work, elsewhere_h = byCategory.elsewhere,
    unobserved_h = math.max(0, dayHours - observed), places = nPlaces, visits = count, max_km = maxKm,
  }
  local notes = {}
  if zoneBefore and zoneBefore ~= d.zone then
    notes[#notes + 1] = string.format("time zone changed (%s → %s): a %d-hour local day", zoneBefore, d.zone, dayHours)
    totals.travel = totals.travel + 1
  end
  if maxKm > 100 then notes[#notes + 1] = "far from home" end
  if row.unobserved_h > 3 then notes[#notes + 1] = "hours between places (travel) or not yet written" end
  row.note = #notes > 0 and table.concat(notes, "; ") or nil
  daily:row(row)
  totals.days, totals.home, totals.observed = totals.days + 1, totals.home + byCategory.home, totals.observed + dayHours
  totals.places, totals.maxKm = totals.places + nPlaces, math.max(totals.maxKm, maxKm)
  -- Plausibility; sources at the end of the file.
  expect.atLeast(count, 1, "visits overlapping " .. d.day .. " (every day holds at least a night at home or away)")
  expect.between(observed, 0, dayHours + 0.01, "hours accounted for on " .. d.day)
  expect.between(nPlaces, 1, 10, "distinct places on " .. d.day)
  expect.between(dayHours, 19, 29, "length of the local day " .. d.day)
  if maxKm <= 100 then expect.between(byCategory.home, 6, 24, "hours at home on " .. d.day) end
end

-- Each morning: every lived day that ended more than two days ago (its last stay has been
-- written, at the latest, when the participant left a place the next day, then held 24 h).
schedule.daily("09:00", function(now)
  if visits.authorizationStatus ~= "authorized" then return end
  while analysed < #lived and lived[analysed + 1].stop + days(2) <= now do
    analysed = analysed + 1
    analyse(lived[analysed], now, analysed > 1 and lived[analysed - 1].zone or nil)
  end
end)

schedule.at(time.studyEnd(), function()
  local distinct = 0
  for _ in pairs(allPlaces) do distinct = distinct + 1 end
  people:row {
    days = totals.days, home_pct = totals.observed > 0 and 100 * totals.home / totals.observed or nil,
    places_per_day = totals.days > 0 and totals.places / totals.days or nil, distinct_places = distinct,
    max_km = totals.maxKm, zone_changes = totals.travel,
  }
  if totals.days > 0 then
    expect.between(100 * totals.home / totals.observed, 40, 95, "share of time at home (%)")
    expect.between(totals.places / totals.days, 1, 6, "places per day")
  end
end)

-- Sources of the plausibility ranges:
-- * time at home 6–24 h a day, 40–95 % overall: US adults spend ~69 % of their time at
--   home (Klepeis et al. 2001, J Expo Anal Environ Epidemiol 11:231, NHAPS); retirees and
--   remote workers more, commuters less.
-- * 1–6 places a day (at most 10 on one day): people visit a median of ~3 distinct
--   locations a day, 90 % of daily networks have ≤ 6 (Schneider et al. 2013, J R Soc
--   Interface 10:20130246).
