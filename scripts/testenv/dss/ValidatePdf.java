import eu.europa.esig.dss.detailedreport.DetailedReport;
import eu.europa.esig.dss.diagnostic.DiagnosticData;
import eu.europa.esig.dss.diagnostic.PDFRevisionWrapper;
import eu.europa.esig.dss.diagnostic.SignatureWrapper;
import eu.europa.esig.dss.diagnostic.TimestampWrapper;
import eu.europa.esig.dss.diagnostic.jaxb.XmlObjectModification;
import eu.europa.esig.dss.enumerations.Indication;
import eu.europa.esig.dss.enumerations.SubIndication;
import eu.europa.esig.dss.jaxb.object.Message;
import eu.europa.esig.dss.model.FileDocument;
import eu.europa.esig.dss.model.x509.CertificateToken;
import eu.europa.esig.dss.pades.validation.PDFDocumentValidator;
import eu.europa.esig.dss.service.crl.OnlineCRLSource;
import eu.europa.esig.dss.service.http.commons.CommonsDataLoader;
import eu.europa.esig.dss.service.http.commons.OCSPDataLoader;
import eu.europa.esig.dss.service.ocsp.OnlineOCSPSource;
import eu.europa.esig.dss.simplereport.SimpleReport;
import eu.europa.esig.dss.simplereport.jaxb.XmlCertificateChain;
import eu.europa.esig.dss.simplereport.jaxb.XmlValidationPolicy;
import eu.europa.esig.dss.spi.validation.CommonCertificateVerifier;
import eu.europa.esig.dss.spi.x509.CommonTrustedCertificateSource;
import eu.europa.esig.dss.spi.x509.aia.DefaultAIASource;
import eu.europa.esig.dss.validation.reports.Reports;

import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Function;

/**
 * dss-validate: validates the signatures of a PDF with the EU Commission's DSS
 * (PAdES, default validation policy) and prints the reports' key facts as
 * JSON on stdout. Built and installed by scripts/testenv/dss.sh; run by
 * test/support/dss-validator.ts.
 *
 * <pre>
 * dss-validate --pdf FILE --trust ROOT.pem [--trust MORE.pem ...] [--allow-online] [--validation-time ISO-8601]
 * dss-validate --version
 * </pre>
 *
 * Exit status 0 whenever a report was printed, whatever it says; 2 for bad
 * arguments, 1 for a file DSS cannot validate (the reason on stderr).
 */
public final class ValidatePdf {
    /** Timeout of every request to an OCSP responder, CRL or AIA server. */
    private static final int ONLINE_TIMEOUT_MS = 10_000;

    private static final class Arguments {
        File pdf;
        final List<File> trust = new ArrayList<>();
        boolean allowOnline;
        Date validationTime;
    }

    private static final class UsageException extends Exception {
        UsageException(String message) {
            super(message);
        }
    }

    public static void main(String[] args) {
        try {
            if (args.length == 1 && args[0].equals("--version")) {
                System.out.println("dss-validate (DSS " + dssVersion() + ")");
                return;
            }
            Arguments arguments = parse(args);
            String json = Json.write(validate(arguments));
            PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
            out.println(json);
            out.flush();
        } catch (UsageException e) {
            System.err.println("dss-validate: " + e.getMessage());
            System.err.println("usage: dss-validate --pdf FILE --trust ROOT.pem [--trust MORE.pem ...] [--allow-online] [--validation-time ISO-8601]");
            System.exit(2);
        } catch (Exception e) {
            System.err.println("dss-validate: " + e);
            System.exit(1);
        }
    }

    /** The version of the dss-validation jar on the class path, from its Maven metadata. */
    private static String dssVersion() throws IOException {
        String resource = "META-INF/maven/eu.europa.ec.joinup.sd-dss/dss-validation/pom.properties";
        try (InputStream in = Reports.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) throw new IOException(resource + " not found on the class path");
            Properties properties = new Properties();
            properties.load(in);
            return properties.getProperty("version");
        }
    }

    private static Arguments parse(String[] args) throws UsageException {
        Arguments arguments = new Arguments();
        for (int i = 0; i < args.length; i++) {
            String option = args[i];
            switch (option) {
                case "--allow-online":
                    arguments.allowOnline = true;
                    continue;
                case "--pdf":
                case "--trust":
                case "--validation-time":
                    break;
                default:
                    throw new UsageException("unknown argument " + option);
            }
            if (++i == args.length) throw new UsageException(option + " needs a value");
            String value = args[i];
            if (option.equals("--pdf")) {
                arguments.pdf = new File(value);
            } else if (option.equals("--trust")) {
                arguments.trust.add(new File(value));
            } else {
                try {
                    arguments.validationTime = Date.from(OffsetDateTime.parse(value).toInstant());
                } catch (RuntimeException e) {
                    throw new UsageException("--validation-time " + value + ": not an ISO 8601 date-time with an offset (" + e.getMessage() + ")");
                }
            }
        }
        if (arguments.pdf == null) throw new UsageException("--pdf is required");
        if (arguments.trust.isEmpty()) throw new UsageException("at least one --trust is required");
        if (!arguments.pdf.isFile()) throw new UsageException(arguments.pdf + ": no such file");
        return arguments;
    }

    /** Every certificate in each PEM (or DER) file, as trust anchors. */
    private static CommonTrustedCertificateSource trustAnchors(List<File> files) throws IOException, CertificateException {
        CertificateFactory factory = CertificateFactory.getInstance("X.509");
        CommonTrustedCertificateSource source = new CommonTrustedCertificateSource();
        for (File file : files) {
            try (InputStream in = new FileInputStream(file)) {
                var certificates = factory.generateCertificates(in);
                if (certificates.isEmpty()) throw new CertificateException("no certificate");
                for (Certificate certificate : certificates) {
                    source.addCertificate(new CertificateToken((X509Certificate) certificate));
                }
            } catch (CertificateException e) {
                throw new CertificateException(file + ": " + e.getMessage(), e);
            }
        }
        return source;
    }

    private static Map<String, Object> validate(Arguments arguments) throws IOException, CertificateException {
        // simpleCreationOnly: no default AIA source, nothing goes online unless asked.
        CommonCertificateVerifier verifier = new CommonCertificateVerifier(true);
        verifier.setTrustedCertSources(trustAnchors(arguments.trust));
        if (arguments.allowOnline) {
            CommonsDataLoader dataLoader = withTimeouts(new CommonsDataLoader());
            verifier.setAIASource(new DefaultAIASource(dataLoader));
            verifier.setCrlSource(new OnlineCRLSource(dataLoader));
            verifier.setOcspSource(new OnlineOCSPSource(withTimeouts(new OCSPDataLoader())));
        }

        PDFDocumentValidator validator = new PDFDocumentValidator(new FileDocument(arguments.pdf));
        validator.setCertificateVerifier(verifier);
        if (arguments.validationTime != null) validator.setValidationTime(arguments.validationTime);
        Reports reports = validator.validateDocument();
        return report(reports);
    }

    private static <T extends CommonsDataLoader> T withTimeouts(T loader) {
        loader.setTimeoutConnection(ONLINE_TIMEOUT_MS);
        loader.setTimeoutConnectionRequest(ONLINE_TIMEOUT_MS);
        loader.setTimeoutResponse(ONLINE_TIMEOUT_MS);
        loader.setTimeoutSocket(ONLINE_TIMEOUT_MS);
        return loader;
    }

    private static Map<String, Object> report(Reports reports) {
        SimpleReport simple = reports.getSimpleReport();
        DetailedReport detailed = reports.getDetailedReport();
        DiagnosticData diagnostic = reports.getDiagnosticData();
        return object(
                "validationTime", time(simple.getValidationTime()),
                "validationPolicy", validationPolicy(simple.getJaxbModel().getValidationPolicy()),
                "signaturesCount", simple.getSignaturesCount(),
                "validSignaturesCount", simple.getValidSignaturesCount(),
                "signatures", each(simple.getSignatureIdList(), id -> signature(id, simple, detailed, diagnostic.getSignatureById(id))),
                "timestamps", each(diagnostic.getTimestampList(), timestamp -> timestamp(timestamp, simple)));
    }

    private static Map<String, Object> signature(String id, SimpleReport simple, DetailedReport detailed, SignatureWrapper wrapper) {
        return object(
                "id", id,
                "signatureFormat", text(simple.getSignatureFormat(id)),
                "indication", text(simple.getIndication(id)),
                "subIndication", text(simple.getSubIndication(id)),
                "signingTime", time(simple.getSigningTime(id)),
                "bestSignatureTime", time(simple.getBestSignatureTime(id)),
                "signedBy", simple.getSignedBy(id),
                "errors", messages(simple.getAdESValidationErrors(id)),
                "warnings", messages(simple.getAdESValidationWarnings(id)),
                "infos", messages(simple.getAdESValidationInfo(id)),
                "certificateChain", certificateChain(simple.getCertificateChain(id)),
                "signatureScopes", each(simple.getSignatureScopes(id), scope -> object(
                        "name", scope.getName(), "scope", text(scope.getScope()), "description", scope.getValue())),
                // The validation processes of ETSI EN 319 102-1 that lead to the final indication.
                "validationProcesses", object(
                        "basic", conclusion(detailed.getBasicValidationIndication(id), detailed.getBasicValidationSubIndication(id)),
                        "longTerm", conclusion(detailed.getLongTermValidationIndication(id), detailed.getLongTermValidationSubIndication(id)),
                        "archival", conclusion(detailed.getArchiveDataValidationIndication(id), detailed.getArchiveDataValidationSubIndication(id))),
                "timestampIds", wrapper == null ? List.of() : wrapper.getTimestampIdsList(),
                "pdfRevision", wrapper == null ? null : pdfRevision(wrapper.getPDFRevision()));
    }

    private static Map<String, Object> timestamp(TimestampWrapper wrapper, SimpleReport simple) {
        String id = wrapper.getId();
        return object(
                "id", id,
                "type", text(wrapper.getType()),
                "indication", text(simple.getIndication(id)),
                "subIndication", text(simple.getSubIndication(id)),
                "productionTime", time(wrapper.getProductionTime()),
                "producedBy", simple.getProducedBy(id),
                "messageImprintIntact", wrapper.isMessageImprintDataIntact(),
                "errors", messages(simple.getAdESValidationErrors(id)),
                "warnings", messages(simple.getAdESValidationWarnings(id)));
    }

    /**
     * DSS's comparison of a signed revision with the final document: pages whose
     * content or annotations differ, and PDF objects added or changed after it
     * was signed, grouped as DSS classifies them.
     */
    private static Map<String, Object> pdfRevision(PDFRevisionWrapper revision) {
        if (revision == null) return null;
        return object(
                "signatureFieldNames", revision.getSignatureFieldNames(),
                "subFilter", revision.getSubFilter(),
                "byteRange", numbers(revision.getSignatureByteRange()),
                "byteRangeValid", revision.isSignatureByteRangeValid(),
                "modificationDetection", object(
                        "detected", revision.arePdfModificationsDetected(),
                        "annotationsOverlapPages", numbers(revision.getPdfAnnotationsOverlapConcernedPages()),
                        "visualDifferencePages", numbers(revision.getPdfVisualDifferenceConcernedPages()),
                        "pageDifferencePages", numbers(revision.getPdfPageDifferenceConcernedPages()),
                        "objectModificationsDetected", revision.arePdfObjectModificationsDetected(),
                        "extensionChanges", objectModifications(revision.getPdfExtensionChanges()),
                        "signatureOrFormFillChanges", objectModifications(revision.getPdfSignatureOrFormFillChanges()),
                        "annotationChanges", objectModifications(revision.getPdfAnnotationChanges()),
                        "undefinedChanges", objectModifications(revision.getPdfUndefinedChanges())));
    }

    private static List<Object> objectModifications(List<XmlObjectModification> modifications) {
        return each(modifications, modification -> object(
                "action", text(modification.getAction()),
                "object", modification.getValue(),
                "fieldName", modification.getFieldName(),
                "type", modification.getType()));
    }

    /** Signing certificate first. */
    private static List<Object> certificateChain(XmlCertificateChain chain) {
        return each(chain == null ? null : chain.getCertificate(), certificate -> object(
                "id", certificate.getId(), "name", certificate.getQualifiedName(), "trusted", certificate.isTrusted()));
    }

    private static Map<String, Object> validationPolicy(XmlValidationPolicy policy) {
        return policy == null ? null : object("name", policy.getPolicyName(), "description", policy.getPolicyDescription());
    }

    private static Map<String, Object> conclusion(Indication indication, SubIndication subIndication) {
        return indication == null ? null : object("indication", text(indication), "subIndication", text(subIndication));
    }

    /** Messages as {key, text}: the key names the check (stable), the text explains it. */
    private static List<Object> messages(List<Message> messages) {
        return each(messages, message -> object("key", message.getKey(), "text", message.getValue()));
    }

    private static List<Object> numbers(List<BigInteger> numbers) {
        return each(numbers, number -> number);
    }

    /** A JSON object: keys and values alternating, in this order (a null value is kept). */
    private static Map<String, Object> object(Object... keysAndValues) {
        Map<String, Object> result = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) result.put((String) keysAndValues[i], keysAndValues[i + 1]);
        return result;
    }

    /** A JSON array of each item converted; null is the empty array. */
    private static <T> List<Object> each(List<T> items, Function<T, Object> convert) {
        List<Object> result = new ArrayList<>();
        if (items != null) for (T item : items) result.add(convert.apply(item));
        return result;
    }

    private static String text(Object value) {
        return value == null ? null : value.toString();
    }

    private static String time(Date date) {
        return date == null ? null : date.toInstant().toString();
    }

    /** A minimal JSON writer for maps, lists, strings, numbers, booleans and null. */
    static final class Json {
        static String write(Object value) {
            StringBuilder out = new StringBuilder();
            write(out, value);
            return out.toString();
        }

        private static void write(StringBuilder out, Object value) {
            if (value == null) {
                out.append("null");
            } else if (value instanceof String) {
                string(out, (String) value);
            } else if (value instanceof Number || value instanceof Boolean) {
                out.append(value);
            } else if (value instanceof Map) {
                out.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) {
                    if (!first) out.append(',');
                    first = false;
                    string(out, entry.getKey().toString());
                    out.append(':');
                    write(out, entry.getValue());
                }
                out.append('}');
            } else if (value instanceof List) {
                out.append('[');
                boolean first = true;
                for (Object item : (List<?>) value) {
                    if (!first) out.append(',');
                    first = false;
                    write(out, item);
                }
                out.append(']');
            } else {
                throw new IllegalArgumentException("no JSON for " + value.getClass());
            }
        }

        private static void string(StringBuilder out, String value) {
            out.append('"');
            for (int i = 0; i < value.length(); i++) {
                char c = value.charAt(i);
                switch (c) {
                    case '"': out.append("\\\""); break;
                    case '\\': out.append("\\\\"); break;
                    case '\n': out.append("\\n"); break;
                    case '\r': out.append("\\r"); break;
                    case '\t': out.append("\\t"); break;
                    default:
                        if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
                        else out.append(c);
                }
            }
            out.append('"');
        }
    }
}
