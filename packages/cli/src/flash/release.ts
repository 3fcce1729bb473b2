import type { SdkClient } from "@sdk/client";
import type { Board } from "@sdk/protocol";
import { composeFlashUf2 } from "@sdk/protocol/uf2";

/** One firmware release as the server lists it (the shape of FirmwareRelease in @sdk/protocol). */
export interface ReleaseInfo {
  version: string;
  newest: boolean;
  boards: { board: Board; bytes: number; sha256: string }[];
}

/** Where `sdk flash` gets firmware and how it builds the UF2: the server and @sdk/protocol/uf2. */
export interface Releases {
  /** The releases, newest first. */
  list(): Promise<ReleaseInfo[]>;
  /** One board's UF2 of a release. */
  download(version: string, board: Board): Promise<Uint8Array>;
  /** The UF2 to copy to the drive: the release image plus the config block in its sector. */
  compose(release: Uint8Array, board: Board, configBlock: Uint8Array): Uint8Array;
}

export function serverReleases(client: SdkClient): Releases {
  return {
    list: () => client.api.listFirmware(),
    download: (version, board) => client.downloadFirmware({ version, board }),
    compose: composeFlashUf2,
  };
}
