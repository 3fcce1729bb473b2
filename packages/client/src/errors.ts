/** The server answered with the error envelope. */
export class SdkApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly docs: string;
  readonly fields?: { path: string; message: string }[];

  constructor(
    status: number,
    body: { code: string; message: string; docs: string; fields?: { path: string; message: string }[] },
  ) {
    super(body.message);
    this.name = "SdkApiError";
    this.status = status;
    this.code = body.code;
    this.docs = body.docs;
    this.fields = body.fields;
  }
}

/** The server could not be reached, or answered with something that is not this API. */
export class SdkNetworkError extends Error {
  readonly url: string;

  constructor(url: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "SdkNetworkError";
    this.url = url;
  }
}
