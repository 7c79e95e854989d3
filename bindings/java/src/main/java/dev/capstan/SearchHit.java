package dev.capstan;

/**
 * One tool found by {@link Registry#search}.
 *
 * @param name the tool's name
 * @param description its description
 * @param score how well it matched (BM25 for words; higher is better)
 */
public record SearchHit(String name, String description, double score) {}
