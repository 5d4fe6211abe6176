--- The deadline of an approval request: when it arrived, when the server
--- rejects it by itself (from expiresAt, timeoutMs and the older fields,
--- docs/protocol.md, "Approval"), and the countdown the review shows.
local D = {}

--- Milliseconds since the epoch of an RFC 3339 time ("2026-11-23T17:05:00Z",
--- "2026-11-23T17:05:00.250Z", "2026-11-23T18:05:00+01:00"), or nil.
local function epoch_ms(text)
  if type(text) ~= "string" then
    return nil
  end
  local y, mo, d, h, mi, sec, frac, zone = text:match("^(%d%d%d%d)-(%d%d)-(%d%d)[Tt ](%d%d):(%d%d):(%d%d)(%.?%d*)(.*)$")
  if not y then
    return nil
  end
  y, mo, d = tonumber(y), tonumber(mo), tonumber(d)
  -- Days since 1970-01-01 of a civil date, independent of the local zone.
  if mo <= 2 then
    y = y - 1
  end
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local doy = math.floor((153 * ((mo + 9) % 12) + 2) / 5) + d - 1
  local days = era * 146097 + yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy - 719468
  local ms = (days * 86400 + tonumber(h) * 3600 + tonumber(mi) * 60 + tonumber(sec)) * 1000
  if #frac > 1 then
    ms = ms + math.floor(tonumber("0" .. frac) * 1000 + 0.5)
  end
  if zone ~= "Z" and zone ~= "z" then
    local sign, zh, zm = zone:match("^([+-])(%d%d):?(%d%d)$")
    if not sign then
      return nil
    end
    ms = ms - (tonumber(zh) * 3600 + tonumber(zm) * 60) * 1000 * (sign == "+" and 1 or -1)
  end
  return ms
end
D.epoch_ms = epoch_ms

--- Seconds since the epoch of an RFC 3339 time, or nil.
local function parse_utc(text)
  local ms = epoch_ms(text)
  return ms and math.floor(ms / 1000)
end
D.parse_utc = parse_utc

--- The local clock: milliseconds since the epoch.
local function wall_ms()
  local s, us = vim.uv.gettimeofday()
  return s * 1000 + math.floor(us / 1000)
end
D.wall_ms = wall_ms

--- How far apart expiresAt and timeoutMs may be before the local clock is
--- taken to be off (docs/protocol.md, "Approval").
local skew_ms = 2000
D.skew_ms = skew_ms

--- Stamps a new entry with when it arrived, on the local clock (wall) and
--- on the monotonic clock (the countdown, immune to clock changes).
function D.arrived(entry)
  vim.uv.update_time()
  entry.received_mono = vim.uv.now()
  entry.received_wall = wall_ms()
  entry.received_at = math.floor(entry.received_wall / 1000)
end

--- When the server rejects the request by itself, as a monotonic time
--- (vim.uv.now()), or nil. From expiresAt when the clocks agree with
--- timeoutMs, else from timeoutMs after arrival; without timeoutMs from
--- expiresAt, deadline, or timeoutSeconds after arrival.
local function deadline_of(entry)
  if entry.deadline == nil then
    if not entry.received_mono then
      D.arrived(entry)
    end
    local p = entry.params
    local at = epoch_ms(p.expiresAt)
    local ms = type(p.timeoutMs) == "number" and p.timeoutMs or nil
    local left -- ms after arrival
    if at and ms then
      local by_clock = at - entry.received_wall
      left = math.abs(by_clock - ms) <= skew_ms and by_clock or ms
    elseif at or ms then
      left = at and (at - entry.received_wall) or ms
    else
      at = epoch_ms(p.deadline)
      if at then
        left = at - entry.received_wall
      elseif type(p.timeoutSeconds) == "number" and p.timeoutSeconds > 0 then
        left = p.timeoutSeconds * 1000
      end
    end
    entry.deadline = left and (entry.received_mono + left) or false
  end
  return entry.deadline or nil
end
D.deadline_of = deadline_of

--- Milliseconds left before the server rejects entry by itself (0 once
--- past), or nil without a deadline.
function D.ms_left(entry)
  local dl = deadline_of(entry)
  if not dl then
    return nil
  end
  vim.uv.update_time()
  return math.max(0, dl - vim.uv.now())
end

--- "4:32 left (rejected by itself at 17:05:00)", or nil without a deadline.
function D.time_left(entry)
  local ms = D.ms_left(entry)
  if not ms then
    return nil
  end
  local left = math.ceil(ms / 1000)
  local at = math.floor((wall_ms() + ms) / 1000)
  return string.format("%d:%02d left (rejected by itself at %s)", math.floor(left / 60), left % 60, os.date("%H:%M:%S", at))
end

return D
