-- A collision-detection simulation in the manner of the CD benchmark: aircraft fly on
-- circles at a few altitudes; every frame each one's motion is a pair of vectors, the
-- motions are hashed into voxels along their paths, and the pairs that share a voxel are
-- tested for a closest approach under the collision radius. Vectors are small objects
-- with metamethods, made and dropped by the million; the voxel map lives one frame.
local Vector = {}
Vector.__index = Vector
local function vector(x, y, z) return setmetatable({x = x, y = y, z = z}, Vector) end
function Vector.__add(a, b) return vector(a.x + b.x, a.y + b.y, a.z + b.z) end
function Vector.__sub(a, b) return vector(a.x - b.x, a.y - b.y, a.z - b.z) end
function Vector.__mul(a, s) return vector(a.x * s, a.y * s, a.z * s) end
function Vector:dot(b) return self.x * b.x + self.y * b.y + self.z * b.z end

local kRadius, kVoxel = 1.0, 2.0

local function position(plane, time)
  local angle = plane.phase + time * plane.speed
  return vector(plane.cx + plane.r * math.cos(angle), plane.cy + plane.r * math.sin(angle), plane.z)
end

-- The closest approach of two motions over the frame, both moving linearly.
local function collides(a, b)
  local da, db = a.to - a.from, b.to - b.from
  local offset, relative = a.from - b.from, da - db
  local speed2 = relative:dot(relative)
  local t = 0.0
  if speed2 > 1e-12 then t = math.max(0.0, math.min(1.0, -offset:dot(relative) / speed2)) end
  local gap = offset + relative * t
  return gap:dot(gap) <= 4 * kRadius * kRadius
end

local function voxelKey(v)
  return (v.x // kVoxel) * 65536 + (v.y // kVoxel) + v.z * 1048576 * 64
end

-- Each motion goes into the voxels of its start, middle and end.
local function addToVoxels(voxels, motion)
  local seen = {}
  for _, s in ipairs({0.0, 0.5, 1.0}) do
    local key = voxelKey(motion.from + (motion.to - motion.from) * s)
    if not seen[key] then
      seen[key] = true
      local list = voxels[key]
      if not list then
        list = {}
        voxels[key] = list
      end
      list[#list + 1] = motion
    end
  end
end

local function frame(planes, time)
  local voxels, collisions = {}, 0
  for _, plane in ipairs(planes) do
    addToVoxels(voxels, {plane = plane, from = position(plane, time), to = position(plane, time + 1)})
  end
  local reported = {}
  for _, list in pairs(voxels) do
    for i = 1, #list do
      for j = i + 1, #list do
        local a, b = list[i], list[j]
        local id = a.plane.id < b.plane.id and a.plane.id * 100000 + b.plane.id or b.plane.id * 100000 + a.plane.id
        if not reported[id] and collides(a, b) then
          reported[id] = true
          collisions = collisions + 1
        end
      end
    end
  end
  return collisions
end

local frames = tonumber(arg and arg[1]) or 400
local planes = {}
for i = 1, 400 do
  planes[i] = {id = i, cx = (i % 20) * 6.0, cy = (i // 20) * 6.0, r = 5.0 + i % 7, z = i % 3,
               phase = i * 0.37, speed = 0.05 + (i % 5) * 0.01}
end
local total = 0
for time = 1, frames do total = total + frame(planes, time) end
print(frames, total)
