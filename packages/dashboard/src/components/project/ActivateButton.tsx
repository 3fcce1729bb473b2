import { type RolloutOptions, rolloutLimits, tagPattern } from "@sdk/protocol";
import { useId, useState } from "react";
import { api } from "../../api.ts";
import { ConfirmButton } from "../ConfirmButton.tsx";

type Mode = "now" | "tag" | "percent";

/** The body of the activation: at once, or a canary on a tag or a share of the connected devices. */
function rolloutOf(mode: Mode, tag: string, percent: string, window: string): RolloutOptions | undefined {
  if (mode === "now") return undefined;
  const windowSeconds = window.trim() === "" ? undefined : Number(window);
  if (
    windowSeconds !== undefined &&
    (!Number.isInteger(windowSeconds) ||
      windowSeconds < rolloutLimits.minWindowSeconds ||
      windowSeconds > rolloutLimits.maxWindowSeconds)
  )
    throw new Error(`The window is a whole number of seconds from 1 to ${rolloutLimits.maxWindowSeconds}.`);
  const extra = windowSeconds === undefined ? {} : { windowSeconds };
  if (mode === "tag") {
    if (!tagPattern.test(tag.trim()))
      throw new Error("The tag is 1–32 lowercase letters, digits, - or _ (e.g. kitchen).");
    return { canary: { tag: tag.trim() }, ...extra };
  }
  const share = Number(percent);
  if (!Number.isInteger(share) || share < 1 || share > 99)
    throw new Error("The share is a whole percentage from 1 to 99.");
  return { canary: { percent: share }, ...extra };
}

/**
 * "Roll back to v2" / "Make live: v4" on an earlier deployment: at once on every device, or as a
 * canary (on a tag, or a share of the connected devices) that the server promotes or rolls back.
 */
export function ActivateButton({
  projectId,
  deploymentId,
  label,
  version,
  wasLive,
  busyWith,
  onActivated,
}: {
  projectId: string;
  deploymentId: string;
  label: string;
  version: number;
  /** It was live once (a rollback makes it live "again"); a rolled-back canary never was. */
  wasLive: boolean;
  /** Why it cannot be made live now (a canary is running), or null. */
  busyWith: string | null;
  onActivated: () => void;
}) {
  const id = useId();
  const [mode, setMode] = useState<Mode>("now");
  const [tag, setTag] = useState("");
  const [percent, setPercent] = useState("25");
  const [windowText, setWindowText] = useState("");
  const radio = (value: Mode, text: string) => (
    <label className="radio-option">
      <input
        type="radio"
        name={`${id}-mode`}
        value={value}
        checked={mode === value}
        onChange={() => setMode(value)}
      />
      {text}
    </label>
  );
  return (
    <ConfirmButton
      label={label}
      className="button-small"
      title={`Make v${version} live${wasLive ? " again" : ""}?`}
      disabled={busyWith !== null}
      disabledReason={busyWith ?? undefined}
      confirmLabel={mode === "now" ? label : `Start canary of v${version}`}
      onConfirm={async () => {
        // An empty object: at once, as before canaries.
        const body = rolloutOf(mode, tag, percent, windowText) ?? {};
        await api.activateDeployment({ params: { projectId, deploymentId }, body });
        onActivated();
      }}
    >
      <fieldset className="activate-options">
        <legend>How</legend>
        {radio("now", "At once on every device")}
        {radio("tag", "As a canary on the devices tagged")}
        {mode === "tag" && (
          <input
            className="radio-detail"
            aria-label="Canary tag"
            value={tag}
            placeholder="kitchen"
            onChange={(e) => setTag(e.target.value)}
          />
        )}
        {radio("percent", "As a canary on a share of the connected devices")}
        {mode === "percent" && (
          <label className="radio-detail field-inline">
            <input
              aria-label="Canary share (%)"
              type="number"
              min={1}
              max={99}
              value={percent}
              onChange={(e) => setPercent(e.target.value)}
            />
            %
          </label>
        )}
        {mode !== "now" && (
          <label className="field radio-detail">
            Window (seconds)
            <input
              type="number"
              min={rolloutLimits.minWindowSeconds}
              max={rolloutLimits.maxWindowSeconds}
              placeholder={`server default (${rolloutLimits.defaultWindowSeconds})`}
              value={windowText}
              onChange={(e) => setWindowText(e.target.value)}
            />
          </label>
        )}
      </fieldset>
      <p>
        {mode === "now"
          ? "Connected devices switch to this version without disconnecting."
          : "Only the canary's devices switch; the server compares their health with the others' for the window, then makes it live everywhere or rolls it back by itself."}
      </p>
    </ConfirmButton>
  );
}
