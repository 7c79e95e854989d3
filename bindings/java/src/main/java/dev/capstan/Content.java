package dev.capstan;

import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Non-text tool results: images, audio and files, sent to the model as each provider takes them
 * ({@code CAPSTAN_CONTENT_PARTS}). A tool returns a {@code Content}, or a {@link List} mixing them with
 * strings and other values (each a text part; non-strings as JSON), e.g.
 * {@code return List.of("the chart:", Content.image(png, "image/png"));}. capstan checks the parts when the
 * call completes (base64, MIME type, the registry's byte bound): a bad part makes the call a tool error
 * naming it. The result's {@link ToolResult#content()} is then the parts' text, each image or file a
 * bracketed line ({@code [image: image/png, 1234 bytes]}); {@link Registry#runTurn}, streams and
 * {@link Formats#formatResults(Format, List)} send the bytes themselves.
 */
public sealed interface Content permits Content.Image, Content.File {
    /** An image: PNG, JPEG, GIF and WebP reach every provider. */
    record Image(byte[] data, String mime) implements Content {
        public Image {
            if (data == null) throw new IllegalArgumentException("Content.Image: data is null");
            if (mime == null) throw new IllegalArgumentException("Content.Image: mime is null");
        }
    }

    /**
     * A file: audio ({@code audio/...}) is sent as an MCP audio part, anything else as an embedded
     * resource named {@code file:///name} ({@code application/pdf} reaches every provider as a document).
     */
    record File(byte[] data, String mime, String name) implements Content {
        public File {
            if (data == null) throw new IllegalArgumentException("Content.File: data is null");
            if (mime == null) throw new IllegalArgumentException("Content.File: mime is null");
            if (name == null || name.isEmpty()) name = "file";
        }
    }

    static Image image(byte[] data, String mime) {
        return new Image(data, mime);
    }

    static File file(byte[] data, String mime, String name) {
        return new File(data, mime, name);
    }

    /** The MCP content block of this image or file. */
    default Map<String, Object> part() {
        Map<String, Object> m = new LinkedHashMap<>();
        switch (this) {
            case Image i -> {
                m.put("type", "image");
                m.put("data", Base64.getEncoder().encodeToString(i.data()));
                m.put("mimeType", i.mime());
            }
            case File f when f.mime().startsWith("audio/") -> {
                m.put("type", "audio");
                m.put("data", Base64.getEncoder().encodeToString(f.data()));
                m.put("mimeType", f.mime());
            }
            case File f -> {
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("uri", "file:///" + f.name());
                r.put("mimeType", f.mime());
                r.put("blob", Base64.getEncoder().encodeToString(f.data()));
                m.put("type", "resource");
                m.put("resource", r);
            }
        }
        return m;
    }
}
