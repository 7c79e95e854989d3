package dev.capstan;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/** Describes a tool method's parameter or an argument record's component in the generated schema. */
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.PARAMETER, ElementType.RECORD_COMPONENT, ElementType.FIELD, ElementType.METHOD})
public @interface Param {
    /** The description, for the model. */
    String value() default "";

    /** The argument's name; empty: the parameter's (needs {@code javac -parameters}) or component's name. */
    String name() default "";
}
