import type { PinState } from "@sdk/protocol";
import { Empty } from "../Feedback.tsx";
import { RelativeTime } from "../Time.tsx";

const pinName = (pin: PinState["pin"]) => (pin === "LED" ? "Onboard LED" : `GP${pin}`);

function level(pin: PinState): string {
  if (pin.mode === "pwm" && pin.pwm) return `PWM ${pin.pwm.frequency} Hz, ${Math.round(pin.pwm.duty * 100)}%`;
  if (pin.level === null) return "unknown";
  return pin.level === 1 ? "High (1)" : "Low (0)";
}

function mode(pin: PinState): string {
  if (pin.mode === null) return "—";
  if (pin.mode === "input" && pin.pull && pin.pull !== "none") return `input, pull-${pin.pull}`;
  return pin.mode;
}

/** The board's pins as the server knows them, live: LED, outputs set, watched inputs, PWM. */
export function PinsPanel({ pins, online }: { pins: PinState[]; online: boolean }) {
  return (
    <section className="card section" aria-labelledby="pins-title">
      <h2 id="pins-title">Pins</h2>
      {pins.length === 0 ? (
        <Empty title={online ? "No pin used yet" : "The board is offline"}>
          {online
            ? "Pins your script or a command sets, reads or watches appear here, with their level as it changes."
            : "Pins show here while the board is connected."}
        </Empty>
      ) : (
        <table className="table pins-table">
          <thead>
            <tr>
              <th scope="col">Pin</th>
              <th scope="col">Mode</th>
              <th scope="col">Level</th>
              <th scope="col">Watched</th>
              <th scope="col">Changed</th>
            </tr>
          </thead>
          <tbody>
            {pins.map((pin) => (
              <tr key={String(pin.pin)} data-pin={String(pin.pin)}>
                <th scope="row">{pinName(pin.pin)}</th>
                <td>{mode(pin)}</td>
                <td>
                  <span
                    className={`pin-level pin-level-${pin.level ?? "unknown"}`}
                    data-testid={`pin-level-${pin.pin}`}
                  >
                    {level(pin)}
                  </span>
                </td>
                <td>
                  {pin.watch
                    ? `${pin.watch.edge} edge${pin.watch.debounceMs ? `, ${pin.watch.debounceMs} ms debounce` : ""}`
                    : "—"}
                </td>
                <td>
                  <RelativeTime iso={pin.updatedAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
