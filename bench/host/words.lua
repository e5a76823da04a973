-- string, table and sort work: word frequencies of a generated text
local function run()
  local syll = {"ka", "lo", "mi", "ne", "ru", "sa", "to", "vi"}
  local words = {}
  local seed = 12345
  for i = 1, 200000 do
    seed = (seed * 1103515245 + 12345) % 2147483648
    local w = syll[seed % 8 + 1] .. syll[(seed >> 8) % 8 + 1]
    if seed % 3 == 0 then w = w .. syll[(seed >> 16) % 8 + 1] end
    words[#words + 1] = w
  end
  local text = table.concat(words, " ")
  local counts, n = {}, 0
  for w in text:gmatch("%S+") do
    if counts[w] == nil then n = n + 1; counts[w] = 0 end
    counts[w] = counts[w] + 1
  end
  local items = {}
  for k, v in pairs(counts) do items[#items + 1] = {k, v} end
  table.sort(items, function(x, y)
    if x[2] ~= y[2] then return x[2] > y[2] end
    return x[1] < y[1]
  end)
  return n, items, #text:upper()
end
local n, items, len = run()
print(n, items[1][1], items[1][2], len)
