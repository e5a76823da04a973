-- attribute access and method calls on a small class hierarchy (metatables)
local Shape = {}
Shape.__index = Shape
function Shape.new(x, y) return setmetatable({x = x, y = y}, Shape) end
function Shape:move(dx, dy) self.x = self.x + dx; self.y = self.y + dy end
function Shape:area() return 0 end

local Rect = setmetatable({}, {__index = Shape})
Rect.__index = Rect
function Rect.new(x, y, w, h)
  local o = Shape.new(x, y)
  o.w = w; o.h = h
  return setmetatable(o, Rect)
end
function Rect:area() return self.w * self.h end

local Square = setmetatable({tag = 1}, {__index = Rect})
Square.__index = Square
function Square.new(x, y, s) return setmetatable(Rect.new(x, y, s, s), Square) end
function Square:side() return self.w end
function Square:weight() return self.tag end

local shapes = {}
for i = 0, 199 do
  if i % 2 == 1 then shapes[#shapes + 1] = Rect.new(i, i, i % 7 + 1, i % 5 + 1)
  else shapes[#shapes + 1] = Square.new(i, -i, i % 9 + 1) end
end
local total = 0
for it = 0, 1499 do
  for _, s in ipairs(shapes) do
    s:move(1, -1)
    total = total + s:area() + s.x - s.y
    if it % 100 == 0 and getmetatable(s) == Square then total = total + s:side() + s:weight() end
  end
end
print(total)
