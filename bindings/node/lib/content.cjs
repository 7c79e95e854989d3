'use strict';
// content.cjs: content parts: images and files a tool returns for the model.


// --- content parts -----------------------------------------------------------

function base64Of(data, what) {
  if (Buffer.isBuffer(data)) return data.toString('base64');
  if (data instanceof Uint8Array) return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('base64');
  throw new TypeError(`${what}: data must be a Buffer, Uint8Array or ArrayBuffer`);
}

/** An image for the model (PNG, JPEG, GIF and WebP reach every provider). */
class Image {
  constructor(data, mime = 'image/png') {
    if (typeof mime !== 'string') throw new TypeError('Image: mime must be a string');
    this._data = base64Of(data, 'Image');
    this.mime = mime;
  }

  /** The MCP content block. */
  part() {
    return { type: 'image', data: this._data, mimeType: this.mime };
  }
}

/**
 * A file for the model: audio (audio/...) is sent as an MCP audio part,
 * anything else as an embedded resource file:///name (application/pdf
 * reaches every provider as a document).
 */
class File {
  constructor(data, mime, name = 'file') {
    if (typeof mime !== 'string') throw new TypeError('File: mime must be a string');
    this._data = base64Of(data, 'File');
    this.mime = mime;
    this.name = name || 'file';
  }

  part() {
    if (this.mime.startsWith('audio/')) return { type: 'audio', data: this._data, mimeType: this.mime };
    return { type: 'resource', resource: { uri: `file:///${this.name}`, mimeType: this.mime, blob: this._data } };
  }
}

const isMedia = (v) => v instanceof Image || v instanceof File;

// The content blocks of a tool's return value, or null when it holds no
// image or file (then it is text or JSON, as before).
function partsOf(value) {
  if (isMedia(value)) return [value.part()];
  if (!Array.isArray(value) || !value.some(isMedia)) return null;
  return value.map((v) => (isMedia(v) ? v.part() : { type: 'text', text: typeof v === 'string' ? v : JSON.stringify(v) ?? '' }));
}

module.exports = { base64Of, Image, File, isMedia, partsOf };
