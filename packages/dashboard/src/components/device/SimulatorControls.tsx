import { type Device, isSimulatorFirmware } from "@sdk/protocol";
import { useId, useState } from "react";
import { api } from "../../api.ts";
import { useAction } from "../../hooks/useAction.ts";
import { ErrorMessage } from "../ErrorMessage.tsx";

type Input = { type: "sim_press" } | { type: "sim_input"; level: 0 | 1 | null };

const said = (input: Input, pin: number) =>
  input.type === "sim_press"
    ? `Pressed the button on GP${pin}.`
    : input.level === null
      ? `Released GP${pin}: its pull decides.`
      : `GP${pin} is driven ${input.level === 1 ? "high" : "low"}.`;

/**
 * For a simulated board only (its firmware starts with `sim-`): press a button or drive an input,
 * with the simulator-only commands sim_press and sim_input (docs/protocol.md). The change goes
 * through the simulated pin (pull, watch, debounce) like a real one, so the script hears it.
 */
export function SimulatorControls({ projectId, device }: { projectId: string; device: Device }) {
  const id = useId();
  const [pin, setPin] = useState("15");
  const [done, setDone] = useState<string | null>(null);
  const action = useAction(async (input: Input, gpio: number) => {
    const args = input.type === "sim_press" ? { pin: gpio } : { pin: gpio, level: input.level };
    await api.sendDeviceCommand({
      params: { projectId, deviceId: device.id },
      body: { type: input.type, args },
    });
    setDone(said(input, gpio));
  });
  if (!isSimulatorFirmware(device.firmwareVersion)) return null;

  const gpio = Number(pin);
  const validPin = /^\d{1,2}$/.test(pin) && gpio <= 29;
  const offline = device.status !== "online";
  const send = (input: Input) => {
    setDone(null);
    void action.run(input, gpio);
  };
  const button = (label: string, input: Input) => (
    <button
      type="button"
      className="button-small"
      disabled={!validPin || offline || action.busy}
      onClick={() => send(input)}
    >
      {label}
    </button>
  );
  return (
    <section className="card section" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Simulated inputs</h2>
      <p className="hint">
        This board is a simulator: press a button or drive a pin as a finger or a sensor would. The script
        hears it through its pin watches (<code>watchPin</code> → <code>gpio_change</code>).
      </p>
      <div className="field field-inline">
        <label htmlFor={`${id}-pin`}>Pin (GP)</label>
        <input
          id={`${id}-pin`}
          inputMode="numeric"
          value={pin}
          aria-invalid={validPin ? undefined : true}
          onChange={(event) => setPin(event.target.value.trim())}
          size={3}
        />
      </div>
      <div className="inline-fields">
        {button("Press button", { type: "sim_press" })}
        {button("Drive low", { type: "sim_input", level: 0 })}
        {button("Drive high", { type: "sim_input", level: 1 })}
        {button("Release", { type: "sim_input", level: null })}
      </div>
      {!validPin && <p className="field-error">A pin is a GPIO number, 0–29.</p>}
      {offline && <p className="hint">The simulator is offline: start it to drive its inputs.</p>}
      {done && (
        <p className="notice notice-success" role="status">
          {done}
        </p>
      )}
      {action.error !== null && <ErrorMessage error={action.error} />}
    </section>
  );
}
