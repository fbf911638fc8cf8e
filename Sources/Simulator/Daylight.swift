import Foundation

/// Solar elevation in degrees at instant `t` (Unix s) for a latitude/longitude, from the
/// textbook declination and hour-angle formulas (accurate to ~1°, enough for daylight).
func solarElevation(_ t: Double, latitude: Double, longitude: Double) -> Double {
    let days = t / 86_400
    let doy = days - 365.2425 * (days / 365.2425).rounded(.down)
    let decl = -23.44 * cos(2 * Double.pi / 365.0 * (doy + 10)) * Double.pi / 180
    let utcHours = (t - 86_400 * (t / 86_400).rounded(.down)) / 3_600
    let solarHours = utcHours + longitude / 15
    let hourAngle = (solarHours - 12) * 15 * Double.pi / 180
    let lat = latitude * Double.pi / 180
    let s = sin(lat) * sin(decl) + cos(lat) * cos(decl) * cos(hourAngle)
    return asin(max(-1, min(1, s))) * 180 / Double.pi
}

/// Horizontal illuminance outdoors under a clear sky, lux, from solar elevation:
/// ~100 000 lx at high sun, ~400 lx at sunrise, a few lux at the end of civil twilight,
/// ~0.01 lx on a dark night (values after the IESNA Lighting Handbook daylight tables).
func clearSkyLux(elevation e: Double) -> Double {
    if e > 0 {
        let s = sin(e * Double.pi / 180)
        return 400 + 110_000 * pow(s, 1.15)
    }
    if e > -6 { return 3.4 * pow(10, (e + 6) / 6 * 2.07) }  // civil twilight: 3.4 … 400 lx
    if e > -18 { return max(0.01, 3.4 * pow(10, (e + 6) / 12 * 2.5)) }
    return 0.01
}
