import { imageSize } from "image-size";

/** A PNG or JPEG a field puts in a picture control. */
export interface ImageValue {
  bytes: Buffer;
  extension: "png" | "jpeg";
  widthPx: number;
  heightPx: number;
}

const DATA_URI = /^data:([\w.+/-]+)?(;[\w=.-]+)*;base64,/i;

/** The image of a data URI or plain base64, or why it is not a PNG or JPEG we can place. */
export function decodeImage(value: string): ImageValue | string {
  const base64 = value.replace(DATA_URI, "").replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(base64)) return "is not base64 or a data URI";
  const bytes = Buffer.from(base64, "base64");
  let size: ReturnType<typeof imageSize>;
  try {
    size = imageSize(bytes);
  } catch {
    return "is not a PNG or JPEG image";
  }
  if (size.type !== "png" && size.type !== "jpg") return `is a ${size.type} image; only PNG and JPEG are placed`;
  if (!size.width || !size.height) return "has no size";
  return { bytes, extension: size.type === "png" ? "png" : "jpeg", widthPx: size.width, heightPx: size.height };
}
