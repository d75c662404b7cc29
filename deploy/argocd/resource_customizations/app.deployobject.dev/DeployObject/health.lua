-- Argo CD health check for DeployObject (app.deployobject.dev/v1), from the
-- conditions its controller writes: Ready, and beside a Ready that is not
-- True, Reconciling (still working) or Stalled (waiting for someone to act).
-- A paused rollout (`kubectl rollout pause`) is Suspended, as Argo CD shows a
-- paused Deployment, and so is a canary waiting at a pause step
-- (CanaryPaused); an aborted canary is Stalled, so Degraded.
local hs = {}
if obj.status == nil or obj.status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the DeployObject controller to report a status"
  return hs
end
if obj.metadata.generation ~= nil and obj.status.observedGeneration ~= obj.metadata.generation then
  -- The conditions describe an earlier spec.
  hs.status = "Progressing"
  hs.message = "Waiting for the DeployObject controller to observe generation " .. obj.metadata.generation
  return hs
end
local ready = nil
local stalled = nil
for _, c in ipairs(obj.status.conditions) do
  if c.type == "Ready" then
    ready = c
  elseif c.type == "Stalled" and c.status == "True" then
    stalled = c
  end
end
if ready == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the DeployObject controller to report a status"
elseif ready.status == "True" then
  hs.status = "Healthy"
  hs.message = ready.message
elseif stalled ~= nil then
  hs.status = "Degraded"
  hs.message = stalled.reason .. ": " .. stalled.message
elseif ready.reason == "Paused" or ready.reason == "CanaryPaused" then
  hs.status = "Suspended"
  hs.message = ready.message
else
  hs.status = "Progressing"
  hs.message = ready.message
end
return hs
