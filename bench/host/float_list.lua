-- float arithmetic on lists: a 1-D heat diffusion stencil
local function run(n, steps)
  local u = {}
  for i = 1, n do u[i] = 0.0 end
  u[n // 2 + 1] = 1000.0
  for s = 1, steps do
    local v = {}
    for i = 1, n do v[i] = 0.0 end
    for i = 2, n - 1 do
      v[i] = u[i] + 0.25 * (u[i - 1] - 2.0 * u[i] + u[i + 1])
    end
    u = v
  end
  local total = 0.0
  for i = 1, n do total = total + u[i] end
  return total
end
print(string.format("%.6f", run(2000, 300)))
