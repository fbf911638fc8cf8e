import LuaHost
import SensorKitModel
