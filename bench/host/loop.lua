-- integer loops
local function run(n)
  local total = 0
  local i = 0
  while i < n do
    total = total + (i * i) % 7
    i = i + 1
  end
  for j = 0, n - 1 do
    total = total ~ j
  end
  return total
end
print(run(3000000))
