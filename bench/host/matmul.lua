-- nested loops: dense matrix multiply on tables of tables
local function matmul(a, b, n)
  local c = {}
  for i = 1, n do
    local row = {}
    for j = 1, n do row[j] = 0.0 end
    c[i] = row
  end
  for i = 1, n do
    local ai, ci = a[i], c[i]
    for k = 1, n do
      local aik, bk = ai[k], b[k]
      for j = 1, n do
        ci[j] = ci[j] + aik * bk[j]
      end
    end
  end
  return c
end
local n = 120
local a, b = {}, {}
for i = 0, n - 1 do
  local ra, rb = {}, {}
  for j = 0, n - 1 do
    ra[j + 1] = ((i * n + j) % 10) / 10.0
    rb[j + 1] = ((i + j) % 7) / 7.0
  end
  a[i + 1], b[i + 1] = ra, rb
end
local c = matmul(a, b, n)
local total = 0.0
for i = 1, n do for j = 1, n do total = total + c[i][j] end end
print(string.format("%.6f", total))
