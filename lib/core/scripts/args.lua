-- Shared prelude: argument checks that run before a script writes anything, so a bad argument is an
-- error reply and never a half-done write (say, a hash written and its PEXPIRE refused: a key left
-- without a TTL). The engine validates every value before sending it; this is the second line.
local function check_ms(value, name, min)
  local n = tonumber(value)
  if not n or n ~= math.floor(n) or n < (min or 1) or n > 2147483647 then
    error({ err = 'ERR invalid ' .. name .. ': ' .. tostring(value) })
  end
  return n
end
