package dev.capstan;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;

/**
 * What {@link Formats#checkHistory} found in a conversation.
 *
 * @param ok no damage found
 * @param findings one per problem: {@code {"kind", "entry", "call_id", "message", "repair"?}}, {@code kind}
 *     being {@code missing_result}, {@code orphan_result}, {@code duplicate_result}, {@code duplicate_call_id},
 *     {@code illegal_id}, {@code out_of_order} or {@code missing_signature}
 * @param repairedJson with repair: the history in the shape it came in, repaired (null without repair)
 * @param json the report as capstan wrote it
 */
public record HistoryCheck(boolean ok, List<JsonNode> findings, String repairedJson, String json) {}
