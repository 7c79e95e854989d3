package dev.capstan;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.lang.reflect.WildcardType;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Deque;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;

/**
 * JSON Schemas (draft 2020-12 subset that every provider takes) generated from Java types, hand-written
 * rather than with victools jsonschema-generator: the mapping a tool needs is small and fixed (records,
 * primitives, strings, enums, collections, maps, Optional), it must say "required" exactly as the binding
 * binds arguments (every component required unless Optional), and it keeps the jar to one dependency
 * (Jackson).
 *
 * <ul>
 *   <li>String, char, CharSequence: string; int/long/short/byte, BigInteger: integer; float/double,
 *       BigDecimal: number; boolean: boolean; an enum: string with its constants' names;</li>
 *   <li>arrays, Collection: array of the element type ({@code uniqueItems} for a Set);
 *       {@code Map<String, V>}: object with additionalProperties V;</li>
 *   <li>a record: object, a property per component, all required except Optional ones,
 *       additionalProperties false; {@link Param} on a component gives its description;</li>
 *   <li>Optional&lt;T&gt; (and OptionalInt...): T, not required; JsonNode or Object: any value.</li>
 * </ul>
 * A recursive record is refused (IllegalArgumentException): provider schemas cannot express it well.
 */
public final class Schemas {
    private Schemas() {}

    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    /** The schema of a record's components, as tool parameters. */
    public static String of(Class<? extends Record> type) {
        return forType(type).toString();
    }

    /** The schema of any supported type. */
    public static ObjectNode forType(Type type) {
        return schema(type, new ArrayDeque<>());
    }

    /** An object schema built property by property (the parameters of an annotated method). */
    static final class Builder {
        private final ObjectNode props = F.objectNode();
        private final ArrayNode required = F.arrayNode();

        void property(String name, Type type, String description) {
            ObjectNode s = schema(type, new ArrayDeque<>());
            if (description != null && !description.isEmpty()) s.put("description", description);
            props.set(name, s);
            if (!isOptional(type)) required.add(name);
        }

        String build() {
            ObjectNode o = F.objectNode().put("type", "object");
            o.set("properties", props);
            if (!required.isEmpty()) o.set("required", required);
            o.put("additionalProperties", false);
            return o.toString();
        }
    }

    static boolean isOptional(Type t) {
        Class<?> c = raw(t);
        return c == Optional.class || c == OptionalInt.class || c == OptionalLong.class || c == OptionalDouble.class;
    }

    private static Class<?> raw(Type t) {
        if (t instanceof Class<?> c) return c;
        if (t instanceof ParameterizedType p) return (Class<?>) p.getRawType();
        if (t instanceof GenericArrayType) return Object[].class;
        if (t instanceof WildcardType w) return raw(w.getUpperBounds()[0]);
        return Object.class;
    }

    private static Type arg(Type t, int i) {
        return t instanceof ParameterizedType p ? p.getActualTypeArguments()[i] : Object.class;
    }

    private static ObjectNode schema(Type t, Deque<Class<?>> seen) {
        Class<?> c = raw(t);
        ObjectNode s = F.objectNode();
        if (c == String.class || c == char.class || c == Character.class || CharSequence.class.isAssignableFrom(c)) {
            return s.put("type", "string");
        }
        if (c == int.class || c == Integer.class || c == long.class || c == Long.class || c == short.class
                || c == Short.class || c == byte.class || c == Byte.class || c == BigInteger.class
                || c == OptionalInt.class || c == OptionalLong.class) {
            return s.put("type", "integer");
        }
        if (c == double.class || c == Double.class || c == float.class || c == Float.class || c == BigDecimal.class
                || c == OptionalDouble.class) {
            return s.put("type", "number");
        }
        if (c == boolean.class || c == Boolean.class) {
            return s.put("type", "boolean");
        }
        if (c.isEnum()) {
            ArrayNode e = s.put("type", "string").putArray("enum");
            for (Object k : c.getEnumConstants()) e.add(((Enum<?>) k).name());
            return s;
        }
        if (c == Optional.class) {
            return schema(arg(t, 0), seen);
        }
        if (c.isArray() || t instanceof GenericArrayType) {
            Type el = t instanceof GenericArrayType g ? g.getGenericComponentType() : c.getComponentType();
            s.put("type", "array").set("items", schema(el, seen));
            return s;
        }
        if (Collection.class.isAssignableFrom(c)) {
            s.put("type", "array").set("items", schema(arg(t, 0), seen));
            if (Set.class.isAssignableFrom(c)) s.put("uniqueItems", true);
            return s;
        }
        if (Map.class.isAssignableFrom(c)) {
            Class<?> k = raw(arg(t, 0));
            if (k != String.class && k != Object.class) {
                throw new IllegalArgumentException("a Map argument needs String keys (JSON object keys), not " + k);
            }
            s.put("type", "object").set("additionalProperties", schema(arg(t, 1), seen));
            return s;
        }
        if (c.isRecord()) {
            if (seen.contains(c)) {
                throw new IllegalArgumentException("record " + c.getName() + " contains itself: not supported");
            }
            seen.push(c);
            ObjectNode props = F.objectNode();
            ArrayNode req = F.arrayNode();
            for (RecordComponent rc : c.getRecordComponents()) {
                ObjectNode ps = schema(rc.getGenericType(), seen);
                Param p = rc.getAnnotation(Param.class);
                String name = p != null && !p.name().isEmpty() ? p.name() : rc.getName();
                if (p != null && !p.value().isEmpty()) ps.put("description", p.value());
                props.set(name, ps);
                if (!isOptional(rc.getGenericType())) req.add(name);
            }
            seen.pop();
            s.put("type", "object").set("properties", props);
            if (!req.isEmpty()) s.set("required", req);
            s.put("additionalProperties", false);
            return s;
        }
        if (c == Object.class || JsonNode.class.isAssignableFrom(c)) {
            return s;
        }
        throw new IllegalArgumentException("no JSON Schema for " + t.getTypeName()
                + ": use a record, a String, a number, a boolean, an enum, a List, a Map or Optional");
    }
}
