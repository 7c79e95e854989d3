package dev.capstan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class StreamTest {
    static byte[] sse(String name) {
        try (InputStream in = StreamTest.class.getResourceAsStream("/fixtures/stream/" + name)) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
    }

    static Registry tools(ConcurrentLinkedQueue<String> ran) {
        return new Registry()
                .tool("get_weather", "", null, c -> {
                    ran.add("get_weather");
                    return "sunny in " + c.arguments().path("city").asText();
                })
                .tool("get_time", "", null, c -> {
                    ran.add("get_time");
                    return "noon";
                });
    }

    @Test
    void aStreamFedByteByByteRunsItsCallsAndDeliversText() throws Exception {
        ConcurrentLinkedQueue<String> ran = new ConcurrentLinkedQueue<>();
        StringBuilder text = new StringBuilder();
        try (Registry r = tools(ran);
                Stream s = r.stream(Format.ANTHROPIC, ExecOptions.DEFAULTS, false, text::append, null)) {
            for (byte b : sse("anthropic_text_then_calls.sse")) s.feed(new byte[] {b});
            Stream.Outcome out = s.finish();
            assertFalse(text.isEmpty());
            assertEquals(text.toString(), out.text());
            assertEquals(out.calls().size(), out.results().size());
            assertTrue(out.results().stream().allMatch(x -> x.outcome() == Outcome.OK), out.json());
            assertTrue(out.messagesJson().contains("tool_result"), out.messagesJson());
        }
    }

    @Test
    void earlyDispatchStartsACallBeforeTheResponseEnds() throws Exception {
        ConcurrentLinkedQueue<String> ran = new ConcurrentLinkedQueue<>();
        CountDownLatch first = new CountDownLatch(1);
        byte[] body = sse("openai_chat_parallel.sse");
        try (Registry r = tools(ran);
                Stream s = r.stream(Format.OPENAI_CHAT, ExecOptions.DEFAULTS, true, null, res -> first.countDown())) {
            // everything but the last event: the first call's arguments are complete by then
            int cut = new String(body, java.nio.charset.StandardCharsets.ISO_8859_1).lastIndexOf("data: ");
            s.feed(body, 0, cut);
            assertTrue(first.await(10, TimeUnit.SECONDS), "no call finished before the response ended");
            s.feed(body, cut, body.length - cut);
            Stream.Outcome out = s.finish();
            assertEquals(List.of("get_weather", "get_time", "get_weather"), out.calls().stream().map(Call::name).toList());
            assertEquals("sunny in Paris", out.results().get(0).content());
        }
    }

    @Test
    void aCallCutByTheTokenLimitIsNeverRun() throws Exception {
        ConcurrentLinkedQueue<String> ran = new ConcurrentLinkedQueue<>();
        try (Registry r = tools(ran); Stream s = r.stream(Format.OPENAI_CHAT)) {
            s.feedAll(new ByteArrayInputStream(sse("openai_chat_truncated.sse")));
            Stream.Outcome out = s.finish();
            assertEquals(List.of(1), out.cutCalls());
            assertEquals(Outcome.INVALID_ARGUMENTS, out.results().get(1).outcome());
            assertEquals(List.of("get_weather"), List.copyOf(ran));
            assertEquals("length", out.stopReason());
        }
    }

    @Test
    void aDroppedConnectionThrowsStreamTruncated() throws Exception {
        try (Registry r = tools(new ConcurrentLinkedQueue<>()); Stream s = r.stream(Format.OPENAI_CHAT)) {
            s.feedAll(new ByteArrayInputStream(sse("openai_chat_dropped.sse")));
            CapstanException e = assertThrows(CapstanException.class, s::finish);
            assertEquals("CAPSTAN_ERR_STREAM_TRUNCATED", e.status());
        }
    }

    @Test
    void aFormatWithoutStreamsIsRefused() {
        try (Registry r = new Registry()) {
            int before = Native.liveHandles();
            CapstanException e = assertThrows(CapstanException.class, () -> r.stream(Format.MCP));
            assertEquals("CAPSTAN_ERR_INVALID_ARGUMENT", e.status());
            assertEquals(before, Native.liveHandles());
        }
    }
}
