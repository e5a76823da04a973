-- allocation-heavy: binary trees of objects
local function make(depth)
  if depth == 0 then return {left = nil, right = nil} end
  return {left = make(depth - 1), right = make(depth - 1)}
end
local function check(node)
  if node.left == nil then return 1 end
  return 1 + check(node.left) + check(node.right)
end
local total = 0
for i = 1, 20 do total = total + check(make(14)) end
print(total)
