package dev.capstan;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/** Marks a public method as a tool for {@link Registry#register(Object)}. */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface Tool {
    /** The tool's name; empty: the method's name. */
    String name() default "";

    /** What the tool does, for the model. */
    String description() default "";

    int timeoutMs() default 0;

    boolean requiresApproval() default false;

    boolean serial() default false;

    /** Runs on the calling thread through capstan's host batches: see {@link ToolOptions#quick()}. */
    boolean quick() default false;

    /** Safe to run twice with the same arguments: see {@link ToolOptions#idempotent()}. */
    boolean idempotent() default false;
    /** Replaces a tool of the same name: see {@link ToolOptions#replace()}. */
    boolean replace() default false;
}
